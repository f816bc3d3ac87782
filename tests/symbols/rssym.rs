// rssym.rs: a Rust program for the symbolization tests: functions in nested modules, a generic
// type with an impl block, a trait, and a closure. The blocks are leaked on purpose.
mod store {
    pub mod bag {
        pub struct Bag<T> {
            pub items: Vec<T>,
        }

        impl<T: Clone> Bag<T> {
            pub fn fill(&mut self, x: T, n: usize) {
                for _ in 0..n {
                    self.items.push(x.clone());
                }
            }
        }
    }

    pub trait Named {
        fn name(&self) -> String;
    }

    impl Named for u32 {
        fn name(&self) -> String {
            format!("item number {} with a long enough name", self)
        }
    }

    #[inline(never)]
    pub fn leak_some(n: usize) -> Vec<u64> {
        let mut b = bag::Bag { items: Vec::new() };
        b.fill(7u64, n);
        let make = |k: usize| vec![k as u8; k];
        std::mem::forget(make(n));
        std::mem::forget(Named::name(&(n as u32)));
        b.items
    }
}

fn main() {
    let v = store::leak_some(100);
    println!("{} items", v.len());
    std::mem::forget(v);
}
