//! Chapter 9's exercises, graded (the checks live in gpubook's crates/gpubook/src/grade/ch09.rs).

#[test]
fn zero_copy_combine() {
    gpubook::grade::ch09::zero_copy_combine(solutions::ch09::combine_with_copy, solutions::ch09::combine_zero_copy);
}

#[test]
fn expert_counts() {
    gpubook::grade::ch09::expert_counts(solutions::ch09::expert_counts);
}
