/** Documents into text (docs/files.md): what the files domain uses of this folder. */
export { extractText, type ExtractedText } from './extract-text';
export { ExtractError, type ExtractErrorCode } from './extract-error';
export { DEFAULT_EXTRACT_LIMITS, type ExtractLimits } from './extract-limits';
export { parseMediaType, type DocumentFormat } from './document-format';
export { chunkText, type ChunkOptions, type TextChunk } from './chunk-text';
