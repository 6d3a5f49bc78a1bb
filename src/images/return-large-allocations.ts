import { dlopen, FFIType } from 'bun:ffi';

/** glibc's `mallopt` parameter for the size from which an allocation gets pages of its own. */
const M_MMAP_THRESHOLD = -3;
const ONE_MIB = 1 << 20;

/**
 * Make the C allocator give every allocation of 1 MiB or more its own pages, returned to the
 * system when freed. The image codec allocates through it from several worker threads: by
 * default glibc raises that threshold to the size of the last large block freed (up to 32 MB)
 * and from then on serves such blocks from each thread's own pool, which keeps them after they
 * are freed. A thumbnail's 16 MB of resizing, made on another thread each time, so stayed behind
 * once per thread, and four uploads in a row peaked 17 MB above one (bench/RESULTS.md "Image
 * memory"). A fixed threshold also turns the raising off. Best effort: on a C library without
 * `mallopt` (musl) nothing changes, and nothing else depends on it.
 */
export function returnLargeAllocations(): void {
  if (process.platform !== 'linux') return;
  try {
    const libc = dlopen('libc.so.6', { mallopt: { args: [FFIType.i32, FFIType.i32], returns: FFIType.i32 } });
    libc.symbols.mallopt(M_MMAP_THRESHOLD, ONE_MIB);
    libc.close();
  } catch {
    // Not glibc: its allocator keeps its own policy.
  }
}
