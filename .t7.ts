import { dlopen, FFIType } from 'bun:ffi';
const lib = dlopen('libc.so.6', { mallopt: { args: [FFIType.i32, FFIType.i32], returns: FFIType.i32 } });
console.log('mallopt', lib.symbols.mallopt(-3, 1 << 20));
