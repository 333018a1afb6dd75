//! [`Svg`]: a finished figure, shown inline by evcxr and embedded by the book.

use std::fmt;
use std::path::Path;

/// An SVG document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Svg(pub String);

impl Svg {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn save(&self, path: impl AsRef<Path>) -> std::io::Result<()> {
        std::fs::write(path, &self.0)
    }

    /// evcxr (the Jupyter kernel) calls this on a cell's value: the figure appears inline.
    pub fn evcxr_display(&self) {
        println!("EVCXR_BEGIN_CONTENT image/svg+xml\n{}\nEVCXR_END_CONTENT", self.0);
    }
}

impl fmt::Display for Svg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<String> for Svg {
    fn from(s: String) -> Self {
        Svg(s)
    }
}
