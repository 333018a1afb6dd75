//! `gpubook book`: build the book into target/book, or serve it and rebuild on every change.

use gpubook::paths::root as workspace_root;
use gpubook_book::{self as book, Options};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// Serve the book on http://127.0.0.1:PORT and rebuild it when a page, kernel or exercise changes.
    #[arg(long)]
    serve: bool,
    #[arg(long, default_value_t = 3000)]
    port: u16,
    /// Where the HTML goes (default: target/book).
    #[arg(long)]
    dest: Option<PathBuf>,
    /// Run every figure again instead of taking it from the cache.
    #[arg(long)]
    fresh: bool,
    /// On a GPU machine: run the outputs the book shows as recorded (`recorded=NAME` markers)
    /// and write their recordings into DIR, to be copied into book/recorded/
    /// (scripts/gpu/record-book.sh).
    #[arg(long, value_name = "DIR")]
    record: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut opts = Options::new(&workspace_root());
    if let Some(dest) = args.dest {
        opts.dest = std::path::absolute(dest)?;
    }
    opts.use_cache = !args.fresh;
    // Runnable listings are run (and, served, graded) by this same binary in a child process.
    opts.gpubook_exe = std::env::current_exe().ok();
    opts.record = args.record.map(std::path::absolute).transpose()?;
    if args.serve {
        book::serve(&opts, args.port)?;
    } else {
        println!("{}", book::build(&opts)?);
    }
    Ok(ExitCode::SUCCESS)
}
