#[derive(Default)]
pub struct Args {
    pub pattern: String,
    pub path: String,
}

impl Args {
    pub fn fill(&mut self, d: (String, String)) {
        self.pattern = d.0;
        Self::check(&self.pattern);
    }

    fn check(p: &str) {
        assert!(!p.is_empty());
    }
}

pub fn defaults() -> (String, String) {
    ("a".into(), "abc".into())
}
