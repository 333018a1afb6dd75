//! gpubook's exercises, solved: the source of truth from which exercises/ is generated.
//!
//! Generated from exercises.toml by `gpubook dev stubs`.

#[cfg(feature = "ch01")]
pub mod ch01;
#[cfg(feature = "ch02")]
pub mod ch02;
#[cfg(feature = "ch03")]
pub mod ch03;
#[cfg(feature = "ch04")]
pub mod ch04;
#[cfg(feature = "ch05")]
pub mod ch05;
#[cfg(feature = "ch06")]
pub mod ch06;
#[cfg(feature = "ch07")]
pub mod ch07;
#[cfg(feature = "ch08")]
pub mod ch08;
#[cfg(feature = "ch09")]
pub mod ch09;
#[cfg(feature = "ch10")]
pub mod ch10;
#[cfg(feature = "ch11")]
pub mod ch11;
#[cfg(feature = "ch12")]
pub mod ch12;
#[cfg(feature = "ch13")]
pub mod ch13;
#[cfg(feature = "ch14")]
pub mod ch14;
