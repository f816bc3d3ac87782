// rust_jemalloc: a Rust program whose global allocator is jemalloc linked statically (Debian's
// libjemalloc_pic.a), called through jemalloc's own functions as tikv-jemallocator does:
// mallocx for every allocation (the alignment in its flags when the layout needs it), rallocx
// for every resize, sdallocx for every free. It builds and drops a vector of 10,000 boxes, grows
// a vector by pushes (a rallocx chain), then leaks 1,000 boxes of 64 bytes in `leak_one`, on the
// line marked LEAK. It prints the sum of the leaked values, so that nothing is optimized away.
use std::alloc::{GlobalAlloc, Layout};

extern "C" {
    fn mallocx(size: usize, flags: i32) -> *mut u8;
    fn rallocx(p: *mut u8, size: usize, flags: i32) -> *mut u8;
    fn sdallocx(p: *mut u8, size: usize, flags: i32);
}

const MALLOCX_ZERO: i32 = 0x40;

struct Jemalloc;

// MALLOCX_LG_ALIGN: jemalloc's own alignment (16) serves the layouts that need no more.
fn flags(layout: &Layout) -> i32 {
    if layout.align() > 16 || layout.align() > layout.size() {
        layout.align().trailing_zeros() as i32
    } else {
        0
    }
}

unsafe impl GlobalAlloc for Jemalloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        mallocx(layout.size(), flags(&layout))
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        mallocx(layout.size(), flags(&layout) | MALLOCX_ZERO)
    }
    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        sdallocx(p, layout.size(), flags(&layout))
    }
    unsafe fn realloc(&self, p: *mut u8, layout: Layout, size: usize) -> *mut u8 {
        rallocx(p, size, flags(&layout))
    }
}

#[global_allocator]
static GLOBAL: Jemalloc = Jemalloc;

#[inline(never)]
fn leak_one(i: u64) -> &'static mut [u64; 8] {
    Box::leak(Box::new([i; 8])) // LEAK
}

fn main() {
    let mut boxes: Vec<Box<[u64; 4]>> = Vec::with_capacity(10000);
    for i in 0..10000 {
        boxes.push(Box::new([i; 4]));
    }
    drop(boxes);
    let mut grown: Vec<u64> = Vec::new();
    for i in 0..100000 {
        grown.push(i);
    }
    let mut sum: u64 = grown.iter().sum();
    drop(grown);
    for i in 0..1000 {
        sum += leak_one(i)[7];
    }
    println!("{}", sum);
}
