//! Benchmarks of the schema-driven generators (filled in below).

fn main() {
    divan::main();
}
