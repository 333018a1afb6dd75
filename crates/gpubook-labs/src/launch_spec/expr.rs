//! Arithmetic over an element index, for the values a kernel should produce:
//! `out[i] = i * (i + 1) / 2`. Numbers are f64; `i` is the scalar's index and `n` the number
//! of scalars. Operators `+ - * / %`, comparisons (1 or 0), `c ? a : b`, and the functions
//! sqrt sin cos exp log abs floor min max pow, and idiv (floor(a / b)).

#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Num(f64),
    Var(char),
    Neg(Box<Expr>),
    Bin(char, Box<Expr>, Box<Expr>),
    /// `<=` is 'l', `>=` 'g', `==` '=', `!=` '!'.
    Cmp(char, Box<Expr>, Box<Expr>),
    If(Box<Expr>, Box<Expr>, Box<Expr>),
    Call(String, Vec<Expr>),
}

const FUNCTIONS: &[(&str, usize)] = &[
    ("sqrt", 1),
    ("sin", 1),
    ("cos", 1),
    ("exp", 1),
    ("log", 1),
    ("abs", 1),
    ("floor", 1),
    ("min", 2),
    ("max", 2),
    ("pow", 2),
    ("idiv", 2),
];

impl Expr {
    pub fn parse(s: &str) -> Result<Expr, String> {
        let mut p = Parser { s: s.as_bytes(), at: 0 };
        let e = p.ternary()?;
        p.skip();
        if p.at != p.s.len() {
            return Err(format!("unexpected `{}` in `{s}`", &s[p.at..]));
        }
        Ok(e)
    }

    pub fn eval(&self, i: f64, n: f64) -> f64 {
        match self {
            Expr::Num(x) => *x,
            Expr::Var('i') => i,
            Expr::Var(_) => n,
            Expr::Neg(a) => -a.eval(i, n),
            Expr::Bin(op, a, b) => {
                let (a, b) = (a.eval(i, n), b.eval(i, n));
                match op {
                    '+' => a + b,
                    '-' => a - b,
                    '*' => a * b,
                    '/' => a / b,
                    _ => a % b,
                }
            }
            Expr::Cmp(op, a, b) => {
                let (a, b) = (a.eval(i, n), b.eval(i, n));
                let t = match op {
                    '<' => a < b,
                    '>' => a > b,
                    'l' => a <= b,
                    'g' => a >= b,
                    '=' => a == b,
                    _ => a != b,
                };
                t as u8 as f64
            }
            Expr::If(c, a, b) => {
                if c.eval(i, n) != 0.0 {
                    a.eval(i, n)
                } else {
                    b.eval(i, n)
                }
            }
            Expr::Call(f, args) => {
                let v: Vec<f64> = args.iter().map(|a| a.eval(i, n)).collect();
                match f.as_str() {
                    "sqrt" => v[0].sqrt(),
                    "sin" => v[0].sin(),
                    "cos" => v[0].cos(),
                    "exp" => v[0].exp(),
                    "log" => v[0].ln(),
                    "abs" => v[0].abs(),
                    "floor" => v[0].floor(),
                    "min" => v[0].min(v[1]),
                    "max" => v[0].max(v[1]),
                    "pow" => v[0].powf(v[1]),
                    _ => (v[0] / v[1]).floor(),
                }
            }
        }
    }
}

struct Parser<'a> {
    s: &'a [u8],
    at: usize,
}

impl Parser<'_> {
    fn skip(&mut self) {
        while self.s.get(self.at).is_some_and(u8::is_ascii_whitespace) {
            self.at += 1;
        }
    }

    fn eat(&mut self, tok: &str) -> bool {
        self.skip();
        if self.s[self.at..].starts_with(tok.as_bytes()) {
            self.at += tok.len();
            true
        } else {
            false
        }
    }

    fn ternary(&mut self) -> Result<Expr, String> {
        let c = self.cmp()?;
        if !self.eat("?") {
            return Ok(c);
        }
        let a = self.ternary()?;
        if !self.eat(":") {
            return Err("`?` without its `:`".into());
        }
        let b = self.ternary()?;
        Ok(Expr::If(Box::new(c), Box::new(a), Box::new(b)))
    }

    fn cmp(&mut self) -> Result<Expr, String> {
        let a = self.add()?;
        for (tok, op) in [("<=", 'l'), (">=", 'g'), ("==", '='), ("!=", '!'), ("<", '<'), (">", '>')] {
            if self.eat(tok) {
                return Ok(Expr::Cmp(op, Box::new(a), Box::new(self.add()?)));
            }
        }
        Ok(a)
    }

    fn add(&mut self) -> Result<Expr, String> {
        let mut a = self.mul()?;
        loop {
            let op = if self.eat("+") {
                '+'
            } else if self.eat("-") {
                '-'
            } else {
                return Ok(a);
            };
            a = Expr::Bin(op, Box::new(a), Box::new(self.mul()?));
        }
    }

    fn mul(&mut self) -> Result<Expr, String> {
        let mut a = self.unary()?;
        loop {
            let op = if self.eat("*") {
                '*'
            } else if self.eat("/") {
                '/'
            } else if self.eat("%") {
                '%'
            } else {
                return Ok(a);
            };
            a = Expr::Bin(op, Box::new(a), Box::new(self.unary()?));
        }
    }

    fn unary(&mut self) -> Result<Expr, String> {
        if self.eat("-") {
            return Ok(Expr::Neg(Box::new(self.unary()?)));
        }
        if self.eat("(") {
            let e = self.ternary()?;
            return if self.eat(")") { Ok(e) } else { Err("a `(` is not closed".into()) };
        }
        self.skip();
        let start = self.at;
        let is_num = |c: u8| c.is_ascii_digit() || c == b'.';
        if self.s.get(self.at).copied().is_some_and(is_num) {
            while self.s.get(self.at).copied().is_some_and(|c| is_num(c) || c == b'e' || c == b'E')
                || (self.s.get(self.at).is_some_and(|&c| c == b'-' || c == b'+') && matches!(self.s[self.at - 1], b'e' | b'E'))
            {
                self.at += 1;
            }
            let t = std::str::from_utf8(&self.s[start..self.at]).unwrap_or_default();
            return t.parse().map(Expr::Num).map_err(|_| format!("`{t}` is not a number"));
        }
        while self.s.get(self.at).is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_') {
            self.at += 1;
        }
        let name = std::str::from_utf8(&self.s[start..self.at]).unwrap_or_default().to_string();
        match name.as_str() {
            "" => Err(format!("expected a number, `i`, `n` or a function at `{}`", String::from_utf8_lossy(&self.s[start..]))),
            "i" | "n" => Ok(Expr::Var(name.chars().next().unwrap_or('i'))),
            f => {
                let &(_, arity) =
                    FUNCTIONS.iter().find(|(name, _)| *name == f).ok_or_else(|| format!("unknown name `{f}`: use i, n or a function"))?;
                if !self.eat("(") {
                    return Err(format!("`{f}` is a function: write {f}(...)"));
                }
                let mut args = vec![self.ternary()?];
                while self.eat(",") {
                    args.push(self.ternary()?);
                }
                if !self.eat(")") || args.len() != arity {
                    return Err(format!("`{f}` takes {arity} argument(s) in parentheses"));
                }
                Ok(Expr::Call(f.to_string(), args))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str, i: f64) -> f64 {
        Expr::parse(s).unwrap().eval(i, 10.0)
    }

    #[test]
    fn expressions_evaluate() {
        assert_eq!(at("i * (i + 1) / 2", 4.0), 10.0);
        assert_eq!(at("-i + 2 * 3 - 1", 1.0), 4.0);
        assert_eq!(at("i % 3 == 0 ? 1 : i < 5 ? 2 : 3", 4.0), 2.0);
        assert_eq!(at("idiv(i, 3) + min(n, 2)", 7.0), 4.0);
        assert_eq!(at("1e3 + 2.5e-1", 0.0), 1000.25);
        assert_eq!(at("sqrt(i)", 9.0), 3.0);
        assert!(Expr::parse("i +").is_err());
        assert!(Expr::parse("foo(i)").is_err());
        assert!(Expr::parse("min(i)").is_err());
        assert!(Expr::parse("(i").is_err());
    }
}
