//! 802.11 models (written on another branch; this placeholder keeps the tree building).
