//! What a node is, shared by the model and the backing folder that persists it.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    File,
    Dir,
}
