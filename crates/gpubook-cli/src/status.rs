//! `gpubook` with no command: the device in use, the course so far, and what to do next.

use super::list;
use super::style::{BAD, BOLD, cmd, paint};
use gpubook::gpu::Gpu;
use gpubook_course::runner::Course;
use std::process::ExitCode;

pub fn run() -> anyhow::Result<ExitCode> {
    let device = Gpu::new();
    match &device {
        Ok(gpu) => {
            let info = gpu.info();
            anstream::println!("{} running on {} · {} backend\n", paint(BOLD, "gpubook"), info.name, info.backend);
        }
        Err(e) => anstream::println!(
            "{} no device to run on: {e}\n({} says what was found and how to fix it)\n",
            paint(BAD, "gpubook:"),
            cmd("gpubook doctor")
        ),
    }
    let course = Course::load()?;
    anstream::print!("{}", list::render(&course, course.current().map(|e| e.id.as_str()), "next"));
    anstream::println!("\n{}", list::summary(&course));
    anstream::print!("\n{}", list::next_steps(&course));
    Ok(if device.is_ok() { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}
