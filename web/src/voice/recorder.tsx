import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, failure } from '../shared/api';

/**
 * Dictation: record from the microphone (MediaRecorder: WebM/Opus in Chromium and Firefox's
 * Ogg, MP4 in Safari, all of which audio/transcribe takes), then send the recording to
 * `audio/transcribe` and put the text in the message box to read over before sending.
 * Shown only when the server has a speech-to-text server (server/getCapabilities).
 */
export function Recorder({ maxBytes, onText }: { maxBytes: number; onText(text: string): void }) {
  const [state, setState] = useState<'idle' | 'recording' | 'transcribing'>('idle');
  const [error, setError] = useState<string>();
  const recorder = useRef<MediaRecorder>(undefined);
  useEffect(() => () => recorder.current?.stream.getTracks().forEach((t) => t.stop()), []);
  if (typeof MediaRecorder === 'undefined' || !navigator.mediaDevices) return null;

  const start = async () => {
    setError(undefined);
    let stream: MediaStream;
    try {
      stream = await navigator.mediaDevices.getUserMedia({ audio: true });
    } catch {
      return setError('The microphone is not available: allow this site to use it, and try again.');
    }
    const chunks: Blob[] = [];
    const rec = new MediaRecorder(stream);
    recorder.current = rec;
    rec.ondataavailable = (e) => e.data.size && chunks.push(e.data);
    rec.onstop = () => {
      stream.getTracks().forEach((t) => t.stop());
      void transcribe(new Blob(chunks, { type: rec.mimeType }));
    };
    rec.start(250);
    setState('recording');
  };
  const transcribe = async (audio: Blob) => {
    if (!audio.size) return setState('idle');
    if (audio.size > maxBytes) return (setError('The recording is too long for this server. Record a shorter one.'), setState('idle'));
    setState('transcribing');
    try {
      const form = new FormData();
      form.append('file', audio, 'recording');
      const res = await fetch('/api/audio/transcribe', { method: 'POST', body: form, credentials: 'same-origin' });
      if (!res.ok) throw await failure(res);
      const { text } = (await res.json()) as { text: string };
      if (text.trim()) onText(text.trim());
      else setError('Nothing was heard in the recording.');
    } catch (err) {
      setError(err instanceof ApiError ? err.message : 'The recording could not be transcribed.');
    } finally {
      setState('idle');
    }
  };
  return (
    <span class="recorder">
      {state === 'recording' ? (
        <button type="button" class="recording" onClick={() => recorder.current?.stop()}>
          Stop recording
        </button>
      ) : (
        <button type="button" disabled={state === 'transcribing'} onClick={start}>
          {state === 'transcribing' ? 'Transcribing…' : 'Record'}
        </button>
      )}
      <span role="status" class="visually-hidden">
        {state === 'recording' ? 'Recording' : ''}
      </span>
      {error && (
        <span role="alert" class="error">
          {error}
        </span>
      )}
    </span>
  );
}
