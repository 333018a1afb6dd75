//! `gpubook_book::build` end to end on small books made here: what a good book turns into, and
//! each way a book must fail (a broken include, an answer included, a broken link, an unknown
//! exercise, a chapter missing from SUMMARY.md, a notebook whose run failed). Only computed
//! figures, so no device is needed.

use gpubook_book::{Options, build};
use std::path::{Path, PathBuf};

const CATALOG: &str = r#"
[[chapter]]
number = 1
title = "First"
folder = "ch01-first"

[[exercise]]
id = "ch01-hello"
chapter = 1
title = "Hello"
files = ["src/ch01.rs", "kernels/ch01/hello.cu"]
test = "ch01"
function = "hello"
concepts = ["a launch"]
hints = ["Launch `hello<<<1, 32>>>`.", "One block of 32 threads."]
"#;

const KERNEL: &str = "// ANCHOR: body\nextern \"C\" __global__ void hello(int* out) { out[threadIdx.x] = 1; }\n// ANCHOR_END: body\n";

/// The learner's stubs, whose signatures the exercise box shows.
const STUB_RS: &str = "/// Launches hello. More words.\npub fn hello(gpu: &Gpu) -> Result<Vec<i32>> {\n    todo!(\"launch it\")\n}\n";
const STUB_CU: &str = "// Each thread writes 1.\nextern \"C\" __global__ void hello(int* out) {\n    // TODO: write\n}\n";
const SOLUTION_CU: &str = "// ANCHOR: signature\nextern \"C\" __global__ void hello(int* out) {\n// ANCHOR_END: signature\n    // SOLUTION\n    // ANCHOR: answer\n    out[threadIdx.x] = 1;\n    // ANCHOR_END: answer\n    // STUB\n    // // TODO: write\n    // END SOLUTION\n}\n";
const NOTEBOOK: &str = r##"{"cells": [{"cell_type": "markdown", "metadata": {}, "source": "# Notebook one"},
 {"cell_type": "code", "metadata": {}, "source": "let x = 1;", "outputs": [], "execution_count": null}],
 "metadata": {}, "nbformat": 4, "nbformat_minor": 5}"##;

/// A workspace with a one-chapter book whose chapter page is `page`; returns its root.
fn workspace(name: &str, summary_extra: &str, page: &str) -> PathBuf {
    let root = std::env::temp_dir().join(format!("gpubook-book-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let write = |rel: &str, text: &str| {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("exercises.toml", CATALOG);
    write("kernels/ch01/hello.cu", KERNEL);
    write("exercises/src/ch01.rs", STUB_RS);
    write("exercises/kernels/ch01/hello.cu", STUB_CU);
    write("solutions/kernels/ch01/hello.cu", SOLUTION_CU);
    write("notebooks/ch01-first.ipynb", NOTEBOOK);
    write("book/book.toml", "[book]\ntitle = \"Test\"\n[build]\ncreate-missing = false\n");
    // A front page first, as in the real book: mdbook copies the first page to index.html, where
    // a chapter's relative links would not hold.
    write(
        "book/src/SUMMARY.md",
        &format!("# Summary\n\n[Front](front.md)\n\n# Chapter 1\n\n- [First](ch01-first/index.md){summary_extra}\n"),
    );
    write("book/src/front.md", "# Front\n");
    write("book/src/ch01-first/index.md", page);
    root
}

fn options(root: &Path) -> Options {
    let mut o = Options::new(root);
    o.dest = root.join("out");
    o.cache_dir = root.join("cache");
    o
}

const GOOD: &str = "# First\n\n```c\n{{#include ../../../kernels/ch01/hello.cu:body}}\n```\n\n{{#figure launch n=40 block=16}}\n\n{{#exercise ch01-hello}}\n\nSee [the exercise](#exercise-ch01-hello).\n";

#[test]
fn a_good_book_has_its_code_figure_and_exercise_box() {
    let root = workspace("good", "", GOOD);
    let report = build(&options(&root)).unwrap();
    assert_eq!((report.pages, report.figures.made), (2, 1));
    let html = std::fs::read_to_string(root.join("out/ch01-first/index.html")).unwrap();
    assert!(html.contains("__global__"), "the include was expanded");
    assert!(html.contains("<figure class=\"gpubook-figure\" data-backend=\"computed\">\n<svg"));
    assert!(html.contains("id=\"exercise-ch01-hello\"") && html.contains("gpubook check ch01-hello"));
    assert!(html.contains("<code>hello&lt;&lt;&lt;1, 32&gt;&gt;&gt;</code>"), "hints are Markdown");
    assert!(html.contains("pub fn hello(gpu: &amp;Gpu) -&gt; Result&lt;Vec&lt;i32&gt;&gt; { ... }"), "the box shows the stub's signature");
    assert!(html.contains("__global__ void hello(int* out) { ... }"));
    assert!(html.contains("gpubook solution ch01-hello"));
    // The chapter links its notebook, which is a page of the book (without outputs: not run here).
    assert!(html.contains("href=\"notebook.html\""));
    let nb = std::fs::read_to_string(root.join("out/ch01-first/notebook.html")).unwrap();
    assert!(nb.contains("Notebook one") && nb.contains("without its outputs"));
    assert_eq!(report.notebooks.without_outputs, ["ch01-first"]);
    // The second build takes the figure from the cache.
    let again = build(&options(&root)).unwrap();
    assert_eq!((again.figures.made, again.figures.cached), (0, 1));
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn a_missing_include_file_or_anchor_fails_the_build() {
    // mdbook itself would include nothing for a missing anchor, silently.
    let root = workspace("anchor", "", &GOOD.replace(":body}}", ":nobody}}"));
    let e = build(&options(&root)).unwrap_err();
    assert!(format!("{e:#}").contains("hello.cu has no `ANCHOR: nobody`"), "{e:#}");
    let page = root.join("book/src/ch01-first/index.md");
    std::fs::write(page, GOOD.replace("hello.cu", "bye.cu")).unwrap();
    let e = build(&options(&root)).unwrap_err();
    assert!(format!("{e:#}").contains("cannot read"), "{e:#}");
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn an_answer_on_the_page_fails_the_build() {
    let page = GOOD.replace("../../../kernels/ch01/hello.cu:body", "../../../solutions/kernels/ch01/hello.cu:answer");
    let root = workspace("answer", "", &page);
    let e = format!("{:#}", build(&options(&root)).unwrap_err());
    assert!(e.contains("shows an exercise's answer"), "{e}");
    // The signature, outside the SOLUTION region, may be shown.
    let page = GOOD.replace("../../../kernels/ch01/hello.cu:body", "../../../solutions/kernels/ch01/hello.cu:signature");
    std::fs::write(root.join("book/src/ch01-first/index.md"), page).unwrap();
    build(&options(&root)).unwrap();
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn an_executed_notebook_is_shown_with_its_outputs_and_a_failed_one_fails_the_build() {
    let root = workspace("notebook", "", GOOD);
    let opts = options(&root);
    let run = |outputs: &str| {
        NOTEBOOK
            .replace("\"outputs\": []", &format!("\"outputs\": {outputs}"))
            .replace("\"execution_count\": null", "\"execution_count\": 1")
    };
    std::fs::create_dir_all(&opts.notebooks).unwrap();
    let ok = run(r#"[{"output_type": "stream", "name": "stdout", "text": "x is one\n"}]"#);
    std::fs::write(opts.notebooks.join("ch01-first.ipynb"), ok).unwrap();
    let report = build(&opts).unwrap();
    assert_eq!(report.notebooks.executed, 1);
    let nb = std::fs::read_to_string(root.join("out/ch01-first/notebook.html")).unwrap();
    assert!(nb.contains("x is one"));
    let failed = run(r#"[{"output_type": "error", "ename": "Error", "evalue": "no method `foo`", "traceback": []}]"#);
    std::fs::write(opts.notebooks.join("ch01-first.ipynb"), failed).unwrap();
    let e = format!("{:#}", build(&opts).unwrap_err());
    assert!(e.contains("no method `foo`"), "{e}");
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn a_broken_internal_link_fails_the_build() {
    let root = workspace("link", "", &GOOD.replace("(#exercise-ch01-hello)", "(#exercise-ch01-bye)"));
    let e = build(&options(&root)).unwrap_err();
    assert!(format!("{e:#}").contains("broken link in ch01-first/index.html: `#exercise-ch01-bye`"), "{e:#}");
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn an_unknown_exercise_or_a_missing_box_fails_the_build() {
    let root = workspace("unknown", "", &GOOD.replace("{{#exercise ch01-hello}}", "{{#exercise ch01-bye}}"));
    let e = format!("{:#}", build(&options(&root)).unwrap_err());
    assert!(e.contains("no exercise `ch01-bye` in exercises.toml"), "{e}");
    assert!(e.contains("exercise `ch01-hello` (exercises.toml) has no"), "{e}");
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn a_chapter_missing_from_the_summary_fails_the_build() {
    let root = workspace("summary", "", GOOD);
    std::fs::write(root.join("book/src/SUMMARY.md"), "# Summary\n").unwrap();
    let e = format!("{:#}", build(&options(&root)).unwrap_err());
    assert!(e.contains("book/src/ch01-first/index.md exists but no entry links it"), "{e}");
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn a_runnable_listing_keeps_its_launch_for_the_server_and_says_how_to_run_it() {
    let page =
        "# First\n\n{{#play kernels/ch01/hello.cu:body kernel=hello grid=1 block=32 args=\"i32[32]:zeros\"}}\n\n{{#exercise ch01-hello}}\n";
    let root = workspace("play", "", page);
    let report = build(&options(&root)).unwrap();
    let l = &report.listings[0];
    assert_eq!((l.id.as_str(), l.kernel.as_str(), l.args.as_slice()), ("hello", "hello", &["i32[32]:zeros".to_string()][..]));
    assert!(l.source.starts_with("extern \"C\" __global__ void hello(") && !l.source.contains("ANCHOR"));
    let html = std::fs::read_to_string(root.join("out/ch01-first/index.html")).unwrap();
    assert!(html.contains("data-play=\"hello\""));
    assert!(html.contains("gpubook run kernels/ch01/hello.cu --kernel hello --grid 1 --block 32 --arg 'i32[32]:zeros'"));
    assert!(html.contains("data-check=\"ch01-hello\""), "the exercise box has a place for Check");
}

#[test]
fn an_exercise_with_a_run_gets_its_stub_as_a_runnable_listing_and_never_the_answer() {
    let root = workspace("exercise-run", "", "# First\n\n{{#exercise ch01-hello}}\n");
    let with_run = CATALOG.replace(
        "function = \"hello\"\n",
        "function = \"hello\"\nrun = \"kernels/ch01/hello.cu --kernel hello --grid 1 --block 32 --arg i32[32]:uninit\"\n",
    );
    std::fs::write(root.join("exercises.toml"), with_run).unwrap();
    let report = build(&options(&root)).unwrap();
    let l = report.listings.iter().find(|l| l.id == "ch01-hello").expect("the exercise's kernel is runnable");
    assert_eq!(
        (l.file.as_str(), l.kernel.as_str(), l.args.as_slice()),
        ("exercises/kernels/ch01/hello.cu", "hello", &["i32[32]:uninit".to_string()][..])
    );
    assert_eq!(l.source, STUB_CU, "the editor starts from the stub");
    let html = std::fs::read_to_string(root.join("out/ch01-first/index.html")).unwrap();
    assert!(html.contains("data-play=\"ch01-hello\""));
    assert!(
        html.contains("gpubook run exercises/kernels/ch01/hello.cu --kernel hello --grid 1 --block 32 --arg 'i32[32]:uninit'"),
        "{html}"
    );
    assert!(!html.contains("out[threadIdx.x] = 1"), "the answer is on the page");
}

#[test]
fn an_exercise_without_a_run_says_why() {
    let root = workspace("exercise-no-run", "", "# First\n\n{{#exercise ch01-hello}}\n");
    let no_run = CATALOG.replace("function = \"hello\"\n", "function = \"hello\"\nno_run = \"it needs the host's three launches\"\n");
    std::fs::write(root.join("exercises.toml"), no_run).unwrap();
    let report = build(&options(&root)).unwrap();
    assert!(report.listings.is_empty());
    let html = std::fs::read_to_string(root.join("out/ch01-first/index.html")).unwrap();
    assert!(html.contains("No Run button for this kernel: it needs the host's three launches"), "{html}");
    assert!(!html.contains("data-play"));
}
