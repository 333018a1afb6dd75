//! The `gpubook` command: status, doctor, bench, and (as chapters land) the exercise runner.

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
