mod parser;
pub mod lexer;

pub fn parse(input: &str) -> Vec<u32> {
    input.split(',').map(|s| s.trim().parse().unwrap()).collect()
}

pub fn total(v: &[u32]) -> u32 {
    v.iter().sum()
}

mod outer {
    pub mod inner {
        pub fn deep() -> u32 {
            super::shallow() + crate::total(&[1])
        }
    }

    pub fn shallow() -> u32 {
        inner::deep()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> Vec<u32> {
        vec![1, 2, helper::make(3)]
    }

    #[test]
    fn parses() {
        assert_eq!(parse("1,2"), vec![1, 2]);
        assert_eq!(total(&fixture()), 6, "sum of {:?}", fixture());
        assert!(self::check(parse("3").len()));
    }

    #[test]
    #[should_panic]
    fn bad_input() {
        let r = std::panic::catch_unwind(|| parse("x"));
        println!("{:?} {}", r, outer::inner::deep());
        debug_assert!(r.is_err().then(|| fail()).is_none());
        assert_eq!(Some(total(&[])).map(|t| t + 1), Some(1));
    }

    fn check(ok: bool) -> bool {
        ok
    }
}
