import { failure } from '../shared/api';

/**
 * Read an answer aloud (`audio/speak {itemId}`, MP3 streamed as the speech server makes it). With
 * Media Source Extensions the audio element starts on the first bytes, while the rest still
 * arrives; a browser without them (iPhones before iOS 17) plays it once it has all arrived.
 */
export async function speakAnswer(itemId: string, audio: HTMLAudioElement, signal: AbortSignal): Promise<void> {
  const res = await fetch('/api/audio/speak', {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ itemId, format: 'mp3' }),
    signal,
  });
  if (!res.ok) throw await failure(res);
  const type = 'audio/mpeg';
  if (typeof MediaSource === 'undefined' || !MediaSource.isTypeSupported(type) || !res.body) {
    audio.src = URL.createObjectURL(await res.blob());
    await audio.play();
    return;
  }
  const source = new MediaSource();
  audio.src = URL.createObjectURL(source);
  await new Promise((resolve) => source.addEventListener('sourceopen', resolve, { once: true }));
  const buffer = source.addSourceBuffer(type);
  const appended = () => new Promise((resolve) => buffer.addEventListener('updateend', resolve, { once: true }));
  const reader = res.body.getReader();
  let started = false;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer.appendBuffer(value);
    await appended();
    if (!started) {
      started = true;
      void audio.play().catch(() => undefined);
    }
  }
  if (source.readyState === 'open') source.endOfStream();
}
