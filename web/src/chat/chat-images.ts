import { call } from '../shared/api';

/**
 * Images go to the server inline, as data URLs: the page's CSP shows only `data:` images, and a
 * data URL is the one kind of image URL every model server takes without fetching anything.
 * A photo is scaled down in the browser first (its longest side at most MAX_SIDE, as JPEG):
 * a phone's 12-megapixel photo would be megabytes for no gain, and redrawing it through a
 * canvas drops its EXIF data (the place it was taken) before it leaves the device.
 */
const MAX_SIDE = 1536;
const QUALITY = 0.85;

const readDataUrl = (blob: Blob) =>
  new Promise<string>((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result));
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(blob);
  });

/** Decode with the browser; what it cannot decode (HEIC, TIFF on most browsers) the server converts to JPEG first. */
async function decode(file: File): Promise<ImageBitmap> {
  try {
    return await createImageBitmap(file);
  } catch {
    const converted = await call<{ success: boolean; dataUrl?: string; error?: { message: string } }>('images/convertImage', { dataUrl: await readDataUrl(file) });
    if (!converted.success || !converted.dataUrl) throw new Error(converted.error?.message ?? 'The image could not be read.');
    return createImageBitmap(blobOf(converted.dataUrl));
  }
}

/** A base64 data URL as a Blob, decoded here: the page's CSP (`connect-src 'self'`) refuses `fetch('data:…')`. */
function blobOf(dataUrl: string): Blob {
  const comma = dataUrl.indexOf(',');
  const type = /^data:([^;,]+)/.exec(dataUrl)?.[1] ?? 'image/jpeg';
  return new Blob([Uint8Array.from(atob(dataUrl.slice(comma + 1)), (c) => c.charCodeAt(0))], { type });
}

/** The file as a JPEG data URL, at most MAX_SIDE pixels on its longest side. */
export async function prepareImage(file: File): Promise<string> {
  const bitmap = await decode(file);
  const scale = Math.min(1, MAX_SIDE / Math.max(bitmap.width, bitmap.height));
  const canvas = document.createElement('canvas');
  canvas.width = Math.max(1, Math.round(bitmap.width * scale));
  canvas.height = Math.max(1, Math.round(bitmap.height * scale));
  const g = canvas.getContext('2d')!;
  // JPEG has no transparency: a transparent PNG would turn black.
  g.fillStyle = '#ffffff';
  g.fillRect(0, 0, canvas.width, canvas.height);
  g.drawImage(bitmap, 0, 0, canvas.width, canvas.height);
  bitmap.close();
  return canvas.toDataURL('image/jpeg', QUALITY);
}

/** The image URLs of a stored user message (`parts` of type `input_image`). */
export function imagesOf(parts: unknown[] | undefined): string[] {
  return (parts ?? []).flatMap((p) => {
    const part = p as { type?: unknown; imageUrl?: unknown } | null;
    return part?.type === 'input_image' && typeof part.imageUrl === 'string' ? [part.imageUrl] : [];
  });
}

/** The files sent with a stored user message (`parts` of type `input_file`). */
export function sentFilesOf(parts: unknown[] | undefined): { fileId: string; filename: string }[] {
  return (parts ?? []).flatMap((p) => {
    const part = p as { type?: unknown; fileId?: unknown; filename?: unknown } | null;
    return part?.type === 'input_file' && typeof part.fileId === 'string' ? [{ fileId: part.fileId, filename: typeof part.filename === 'string' ? part.filename : 'a file' }] : [];
  });
}
