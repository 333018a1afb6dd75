//! Chapter 7's exercises, graded (the checks live in gpubook's crates/gpubook/src/grade/ch07.rs).

#[test]
fn zero_copy_combine() {
    gpubook::grade::ch07::zero_copy_combine(exercises::ch07::combine_with_copy, exercises::ch07::combine_zero_copy);
}

#[test]
fn expert_counts() {
    gpubook::grade::ch07::expert_counts(exercises::ch07::expert_counts);
}
