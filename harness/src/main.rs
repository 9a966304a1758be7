//! The `mcp-chaos` command-line tool.

fn main() {
    println!("mcp-chaos: under construction");
}
