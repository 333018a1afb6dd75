//! numpy's .npy format (version 1.0 written; 1.0 to 3.0 read), for buffers of scalars and CUDA
//! vectors: a float4 buffer of n elements is an (n, 4) array of `<f4`. The format is a magic
//! string, a Python dict literal as header, and the raw little-endian C-order data; small enough
//! to write here rather than pull in a crate and its dependencies.

use super::elem::{Base, ElemType};

const MAGIC: &[u8] = b"\x93NUMPY";

/// The bytes of an .npy file holding `data` (elements of `ty`, `data.len() / ty.size()` of them).
pub fn write(ty: ElemType, data: &[u8]) -> Vec<u8> {
    let n = data.len() / ty.size();
    let shape = if ty.lanes == 1 { format!("({n},)") } else { format!("({n}, {})", ty.lanes) };
    let mut header = format!("{{'descr': '{}', 'fortran_order': False, 'shape': {shape}, }}", ty.base.npy_descr());
    // Magic (6) + version (2) + length (2) + header, padded with spaces to a multiple of 64,
    // ending in a newline, as numpy writes it.
    let unpadded = MAGIC.len() + 4 + header.len() + 1;
    header.extend(std::iter::repeat_n(' ', unpadded.next_multiple_of(64) - unpadded));
    header.push('\n');
    let mut out = Vec::with_capacity(10 + header.len() + data.len());
    out.extend(MAGIC);
    out.extend([1, 0]);
    out.extend((header.len() as u16).to_le_bytes());
    out.extend(header.as_bytes());
    out.extend(data);
    out
}

/// An array read from an .npy file: its scalar type, shape and raw little-endian data.
#[derive(Debug, Clone, PartialEq)]
pub struct Array {
    pub base: Base,
    pub shape: Vec<usize>,
    pub data: Vec<u8>,
}

impl Array {
    /// How many scalars it holds.
    pub fn scalars(&self) -> usize {
        self.shape.iter().product()
    }
}

/// Parses an .npy file; C order only, the scalar types of [`Base`].
pub fn read(bytes: &[u8]) -> Result<Array, String> {
    let rest = bytes.strip_prefix(MAGIC).ok_or("not an .npy file (no \\x93NUMPY magic)")?;
    let (major, rest) = rest.split_at_checked(2).ok_or("truncated .npy header")?;
    let (len, rest) = match major[0] {
        1 => {
            let (l, r) = rest.split_at_checked(2).ok_or("truncated .npy header")?;
            (u16::from_le_bytes([l[0], l[1]]) as usize, r)
        }
        2 | 3 => {
            let (l, r) = rest.split_at_checked(4).ok_or("truncated .npy header")?;
            (u32::from_le_bytes([l[0], l[1], l[2], l[3]]) as usize, r)
        }
        v => return Err(format!(".npy version {v} is not supported (1 to 3 are)")),
    };
    let (header, data) = rest.split_at_checked(len).ok_or("truncated .npy header")?;
    let header = std::str::from_utf8(header).map_err(|_| "the .npy header is not text")?;
    let descr = dict_value(header, "descr").ok_or("the .npy header has no 'descr'")?;
    let descr = descr.trim_matches(|c| c == '\'' || c == '"');
    let base = Base::from_npy_descr(descr)
        .ok_or_else(|| format!("dtype '{descr}' is not supported: use little-endian f4 f8 i1 u1 i2 u2 i4 u4 i8 u8"))?;
    if dict_value(header, "fortran_order").is_some_and(|v| v != "False") {
        return Err("Fortran-order arrays are not supported: save with np.ascontiguousarray".into());
    }
    let shape = dict_value(header, "shape").ok_or("the .npy header has no 'shape'")?;
    let shape: Vec<usize> = shape
        .trim_matches(|c| c == '(' || c == ')')
        .split(',')
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(|d| d.parse().map_err(|_| format!("bad dimension `{d}` in the .npy shape")))
        .collect::<Result<_, _>>()?;
    let want = shape.iter().product::<usize>() * base.size();
    if data.len() != want {
        return Err(format!("the .npy file holds {} data bytes; its shape {shape:?} of {descr} needs {want}", data.len()));
    }
    Ok(Array { base, shape, data: data.to_vec() })
}

/// The text of `key`'s value in a Python dict literal (a tuple kept whole).
fn dict_value<'a>(header: &'a str, key: &str) -> Option<&'a str> {
    let at = header.find(&format!("'{key}'"))? + key.len() + 2;
    let rest = header[at..].trim_start().strip_prefix(':')?.trim_start();
    let end = if rest.starts_with('(') { rest.find(')')? + 1 } else { rest.find([',', '}'])? };
    Some(rest[..end].trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_files_read_back() {
        let ty = ElemType { base: Base::F32, lanes: 4 };
        let data: Vec<u8> = (0..8).flat_map(|i| (i as f32).to_le_bytes()).collect();
        let file = write(ty, &data);
        assert_eq!(file.len() % 64, (data.len()) % 64, "the header is padded to 64 bytes");
        let a = read(&file).unwrap();
        assert_eq!((a.base, a.shape.clone(), a.data.clone()), (Base::F32, vec![2, 4], data));
        let one = read(&write(ElemType { base: Base::U8, lanes: 1 }, &[1, 2, 3])).unwrap();
        assert_eq!(one.shape, vec![3]);
    }

    /// What numpy 1.x/2.x writes for `np.save(f, np.arange(3, dtype=np.int32))`.
    #[test]
    fn numpys_own_header_is_read() {
        let header = "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }";
        let mut file = MAGIC.to_vec();
        file.extend([1, 0]);
        let padded = format!("{header:<117}\n");
        file.extend((padded.len() as u16).to_le_bytes());
        file.extend(padded.as_bytes());
        file.extend([0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0]);
        let a = read(&file).unwrap();
        assert_eq!((a.base, a.shape), (Base::I32, vec![3]));
        assert!(read(b"not numpy").is_err());
        let mut big_endian = file.clone();
        big_endian[MAGIC.len() + 4 + 10..MAGIC.len() + 4 + 13].copy_from_slice(b">i4");
        assert!(read(&big_endian).unwrap_err().contains("not supported"));
    }
}
