/**
 * What a recording is, decided from its first bytes, never from the declared type or the file
 * name (docs/voice.md, "Formats"). The name sent upstream is made from it: OpenAI tells formats
 * apart by the file name's extension, so an `.m4a` from a phone that a browser labelled
 * `application/octet-stream` still goes as `audio.m4a`.
 */
export interface AudioFormat {
  name: 'wav' | 'mp3' | 'm4a' | 'mp4' | 'webm' | 'ogg' | 'flac';
  mimeType: string;
}

export const ACCEPTED_AUDIO = 'm4a/mp4 (AAC), webm (Opus), wav, mp3, ogg (Opus or Vorbis) and flac';

/** Bytes needed to tell every accepted format apart. */
export const SNIFF_BYTES = 12;

export function sniffAudio(head: Uint8Array): AudioFormat | { refusal: string } {
  if (head.length === 0) return { refusal: 'The audio file is empty.' };
  if (ascii(head, 0, 'RIFF') && ascii(head, 8, 'WAVE')) return { name: 'wav', mimeType: 'audio/wav' };
  if (ascii(head, 0, 'OggS')) return { name: 'ogg', mimeType: 'audio/ogg' };
  if (ascii(head, 0, 'fLaC')) return { name: 'flac', mimeType: 'audio/flac' };
  if (head[0] === 0x1a && head[1] === 0x45 && head[2] === 0xdf && head[3] === 0xa3) return { name: 'webm', mimeType: 'audio/webm' };
  if (ascii(head, 4, 'ftyp')) {
    const brand = String.fromCharCode(...head.subarray(8, 12));
    // 3GP is what some Android recorders make, usually with AMR audio, which OpenAI does not take.
    if (brand.startsWith('3g')) return { refusal: `3GP recordings are not accepted; record AAC in an .m4a instead. Accepted: ${ACCEPTED_AUDIO}.` };
    return brand.startsWith('M4A') || brand.startsWith('M4B') ? { name: 'm4a', mimeType: 'audio/mp4' } : { name: 'mp4', mimeType: 'audio/mp4' };
  }
  // An ID3v2 tag opens most MP3 files; the rest start with a frame header.
  if (ascii(head, 0, 'ID3')) return { name: 'mp3', mimeType: 'audio/mpeg' };
  if (head.length >= 4 && head[0] === 0xff && (head[1]! & 0xe0) === 0xe0) {
    const layer = (head[1]! >> 1) & 0b11;
    // Layer bits 00 after the sync word is ADTS: raw AAC, which needs a container.
    if (layer === 0) return { refusal: `Raw AAC (ADTS) is not accepted; send it in an .m4a instead. Accepted: ${ACCEPTED_AUDIO}.` };
    const version = (head[1]! >> 3) & 0b11;
    const bitrate = head[2]! >> 4;
    const rate = (head[2]! >> 2) & 0b11;
    if (version !== 0b01 && bitrate !== 0b1111 && rate !== 0b11) return { name: 'mp3', mimeType: 'audio/mpeg' };
  }
  return { refusal: `This file is not a recording Parley accepts. Accepted: ${ACCEPTED_AUDIO}.` };
}

function ascii(b: Uint8Array, at: number, text: string): boolean {
  if (b.length < at + text.length) return false;
  for (let i = 0; i < text.length; i++) if (b[at + i] !== text.charCodeAt(i)) return false;
  return true;
}
