// The `rules/` tree is compiled into the binary (src/ruledata.rs); rebuild
// whenever any file in it changes.
fn main() {
    println!("cargo:rerun-if-changed=rules");
}
