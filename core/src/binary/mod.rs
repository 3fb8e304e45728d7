//! Binary states: the balanced flip proposal and its kernels.
