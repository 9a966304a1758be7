//! Schema-driven generation of tool arguments (valid and invalid) as proptest strategies.
