//! Words in reports that agree with their numbers: "1 row", "2 rows", "an int", "a float".

/// `n` and the noun in the number `n` calls for: `count(1, "row")` is "1 row", `count(3, "copy")`
/// "3 copies", `count(2, "micro-batch")` "2 micro-batches".
pub fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        return format!("1 {noun}");
    }
    format!("{n} {}", plural(noun))
}

/// The plural of a noun as the graders use them.
pub fn plural(noun: &str) -> String {
    match noun.strip_suffix('y') {
        Some(stem) if !stem.ends_with(['a', 'e', 'o', 'u']) => format!("{stem}ies"),
        _ if noun.ends_with("ch") || noun.ends_with("sh") || noun.ends_with('x') || noun.ends_with('s') => format!("{noun}es"),
        _ => format!("{noun}s"),
    }
}

/// "a" or "an" before `word`, by its sound: "an int", "an 8-byte value", "a float", "a u8".
pub fn article(word: &str) -> &'static str {
    let w = word.trim_start_matches(['`', '\'', '"']);
    let starts_vowel_sound = match w.chars().next() {
        Some(c) if c.is_ascii_digit() => w.starts_with('8') || w.starts_with("11") || w.starts_with("18"),
        Some('u') => {
            !w.starts_with("u8") && !w.starts_with("u16") && !w.starts_with("u32") && !w.starts_with("u64") && !w.starts_with("uni")
        }
        Some(c) => "aeioAEIO".contains(c),
        None => false,
    };
    if starts_vowel_sound { "an" } else { "a" }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_nouns_agree() {
        assert_eq!(count(1, "row"), "1 row");
        assert_eq!(count(0, "row"), "0 rows");
        assert_eq!(count(3, "copy"), "3 copies");
        assert_eq!(count(2, "micro-batch"), "2 micro-batches");
        assert_eq!(count(2, "key"), "2 keys");
        assert_eq!(count(1, "expert"), "1 expert");
    }

    #[test]
    fn articles_follow_the_sound() {
        assert_eq!(article("int"), "an");
        assert_eq!(article("float"), "a");
        assert_eq!(article("8-byte value"), "an");
        assert_eq!(article("4-byte value"), "a");
        assert_eq!(article("u8"), "a");
        assert_eq!(article("`unsigned int`"), "an");
        assert_eq!(article("i32"), "an");
    }
}
