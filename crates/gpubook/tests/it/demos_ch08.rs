//! Chapter 8's example of device sub-slices (introduced there, where the ping-pong exercise first
//! needs them) does what the chapter says. Without a device the test prints SKIPPED.

use gpubook::gpu::{LaunchConfig, Result, Source};
use gpubook::testing::{device_or_skip, root};

#[test]
fn sub_slices_copy_and_launch_on_part_of_a_buffer() -> Result<()> {
    let Some(gpu) = device_or_skip("sub_slices_copy_and_launch_on_part_of_a_buffer") else {
        return Ok(());
    };
    let f = gpu.load_module(Source::file(root().join("kernels/demos/spmd.cu")))?.load_function("scale")?;
    let stream = gpu.default_stream();
    // ANCHOR: sub_slices
    let host: Vec<f32> = (0..300).map(|i| i as f32).collect();
    let mut x = stream.alloc_zeros::<f32>(256)?;
    let mut y = stream.alloc_zeros::<f32>(256)?;
    // Elements 100..200 of the host array into elements 0..100 of x: a view, no copy of x.
    stream.memcpy_htod(&host[100..200], &mut x.slice_mut(..100))?;
    // A kernel on the first 100 elements: each view is a pointer to its first element. The
    // views borrow x and y until the launch is issued.
    let (a, n) = (2.0f32, 100i32);
    {
        let (xv, mut yv) = (x.slice(..100), y.slice_mut(..100));
        let mut launch = stream.launch_builder(&f);
        launch.arg(&xv).arg(&mut yv).arg(&a).arg(&n);
        // SAFETY: xv and yv are 100-float views, and the kernel's i < n (100) guard keeps the
        // threads inside them.
        unsafe { launch.launch(LaunchConfig::for_num_elems(100)) }?;
    }
    // And back into the middle of a host array.
    let mut back = vec![0.0f32; 300];
    stream.memcpy_dtoh(&y.slice(..100), &mut back[100..200])?;
    // ANCHOR_END: sub_slices
    assert!((0..300).all(|i| back[i] == if (100..200).contains(&i) { 2.0 * i as f32 } else { 0.0 }));
    Ok(())
}
