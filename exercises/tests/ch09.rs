//! Chapter 9's exercises, graded (the checks live in gpubook's crates/gpubook/src/grade/ch09.rs).

#[test]
fn zero_copy_combine() {
    gpubook::grade::ch09::zero_copy_combine(exercises::ch09::combine_with_copy, exercises::ch09::combine_zero_copy);
}

#[test]
fn expert_counts() {
    gpubook::grade::ch09::expert_counts(exercises::ch09::expert_counts);
}
