#[macro_export]
macro_rules! square {
    ($x:expr) => {
        $crate::math::mul($x, $x)
    };
}

macro_rules! make_getter {
    ($name:ident, $field:ident) => {
        fn $name(&self) -> u32 {
            self.$field.get().min(limit())
        }
    };
    () => {};
}

pub(crate) use make_getter;

struct Holder {
    a: Cell<u32>,
}

impl Holder {
    make_getter!(get_a, a);
}

fn run() -> u32 {
    macro_rules! local {
        () => {
            compute(1)
        };
    }
    let v = vec![square!(2), local!(), std::cmp::max(1, 2)];
    let s = format!("{}", v.iter().map(|x| x.to_string()).count());
    tracing::info!(target: "run", "{}", s.len());
    quote! {
        fn generated(a: u8) -> u8 { a }
        struct Tuple(u8);
        #[attr(not_a_call)]
        let x = 'a' as u8;
        let y = Vec::<u8>::with_capacity(4);
        let z = parse::<u32>(text);
        $helper(1);
        $crate::util::go(2);
        fn r#type() {}
        if (cond) { r#match(3) } else { other(4) }
    }
    dbg!(v.len()) as u32
}

macro_rules! square {
    () => {};
}
