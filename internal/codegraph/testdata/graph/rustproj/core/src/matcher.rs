use std::fmt;

pub trait Match {
    fn is_match(&self, s: &str) -> bool;
}

pub struct Matcher {
    pat: String,
}

impl Matcher {
    pub fn new(pat: &str) -> Matcher {
        Matcher { pat: normalize(pat) }
    }

    pub fn find(&self, s: &str) -> Option<usize> {
        if self.is_match(s) {
            s.find(&self.pat)
        } else {
            None
        }
    }
}

impl Match for Matcher {
    fn is_match(&self, s: &str) -> bool {
        s.contains(&self.pat)
    }
}

impl fmt::Display for Matcher {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}", self.pat)
    }
}

fn normalize(p: &str) -> String {
    p.trim().to_string()
}

macro_rules! matcher {
    ($p:expr) => {
        Matcher::new($p)
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds() {
        assert_eq!(Matcher::new("b").find("abc"), Some(1));
        assert!(matcher!("a").is_match("a"));
    }
}
