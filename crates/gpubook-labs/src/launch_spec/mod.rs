//! Kernel launches described as text, for `gpubook run` and the fidelity suite: element types
//! (scalars and CUDA vectors: [`elem`]), buffers and values ([`spec`]), .npy files ([`npy`]),
//! a sequence of launches on one device's buffers ([`session`]) and the launch scripts with
//! expected values that .cu files may carry ([`script`], [`expr`]).

pub mod elem;
pub mod expr;
pub mod npy;
pub mod script;
pub mod session;
pub mod spec;

pub use elem::{Base, Elem, ElemType};
pub use script::Script;
pub use session::{Buffer, Launched, Session, Symbol};
pub use spec::{ArgSpec, Init, LaunchLine, SymbolSpec, parse_arg, parse_launch, parse_symbol};
