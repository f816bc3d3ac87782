// collect.rs: leaks made by collect(), Box::new and Vec::with_capacity, each at its own line,
// so a test can check that the site is the user's line and not the iterator or alloc crate
// code that collect() runs through.
use std::hint::black_box;

#[inline(never)]
fn leak_vec(n: usize) -> usize {
    let v: Vec<u64> = (0..n as u64).map(|i| i * 3).collect(); // @collect
    let len = v.len();
    std::mem::forget(v);
    len
}

#[inline(never)]
fn leak_box() {
    let b = Box::new([7u8; 96]); // @box
    std::mem::forget(black_box(b));
}

fn main() {
    let mut total = 0;
    for _ in 0..6 {
        total += leak_vec(40);
    }
    for _ in 0..4 {
        leak_box();
    }
    println!("collect: {}", total);
}
