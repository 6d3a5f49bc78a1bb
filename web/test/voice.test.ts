import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expectAccessible, startWorld, waitOrExplain, type World } from './harness';
import { silentMp3, startFakeAudio, type FakeAudio } from '../../test/fakes/openai-audio';

/**
 * Voice in the web app, against the fake OpenAI audio server: a question recorded from
 * Chromium's fake microphone (fed a WAV file) is transcribed into the message box; an answer is
 * read aloud, the audio element playing the speech as it streams in.
 */

/** A WAV of a 440 Hz tone: what the fake microphone "hears". */
function toneWav(seconds: number, rate = 16_000): Buffer {
  const samples = Math.round(seconds * rate);
  const wav = Buffer.alloc(44 + samples * 2);
  wav.write('RIFF', 0);
  wav.writeUInt32LE(36 + samples * 2, 4);
  wav.write('WAVEfmt ', 8);
  wav.writeUInt32LE(16, 16);
  wav.writeUInt16LE(1, 20); // PCM
  wav.writeUInt16LE(1, 22); // mono
  wav.writeUInt32LE(rate, 24);
  wav.writeUInt32LE(rate * 2, 28);
  wav.writeUInt16LE(2, 32);
  wav.writeUInt16LE(16, 34);
  wav.write('data', 36);
  wav.writeUInt32LE(samples * 2, 40);
  for (let i = 0; i < samples; i++) wav.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / rate)), 44 + i * 2);
  return wav;
}

let world: World;
let audio: FakeAudio;
beforeAll(async () => {
  audio = startFakeAudio();
  const wav = join(mkdtempSync(join(tmpdir(), 'parley-voice-')), 'question.wav');
  writeFileSync(wav, toneWav(3));
  world = await startWorld({
    env: { PARLEY_STT_BASE_URL: audio.url, PARLEY_TTS_BASE_URL: audio.url },
    browserArgs: ['--use-fake-ui-for-media-stream', '--use-fake-device-for-media-stream', `--use-file-for-fake-audio-capture=${wav}`, '--autoplay-policy=no-user-gesture-required'],
  });
}, 240_000);
afterAll(async () => {
  await world?.stop();
  audio?.stop();
});

describe('voice in the web app', () => {
  test('record a question: the recording is transcribed into the message box, to read over and send', async () => {
    const { context, page } = await world.signedIn({ permissions: ['microphone'] });
    audio.transcribe = (r) => ({ text: ` What grows well in shade? `, language: 'english', duration: r.size ? 1.5 : 0 });
    await page.getByRole('button', { name: 'Record' }).click();
    await page.getByRole('button', { name: 'Stop recording' }).waitFor();
    await expectAccessible(page, 'recording a question');
    await page.waitForTimeout(1500);
    await page.getByRole('button', { name: 'Stop recording' }).click();
    const box = page.getByRole('textbox', { name: 'Message' });
    await waitOrExplain(page, page.locator('#message:not(:placeholder-shown)'));
    await expect(box.inputValue()).resolves.toBe('What grows well in shade?');
    // Chromium records WebM/Opus; Parley sniffed it and sent it on as such.
    expect(audio.transcriptions.at(-1)).toMatchObject({ filename: 'audio.webm' });
    expect(audio.transcriptions.at(-1)!.size).toBeGreaterThan(1000);
    await context.close();
  });

  test('hear an answer: "Read aloud" streams the speech into the audio element, which plays it', async () => {
    const { context, page } = await world.signedIn();
    world.ai.eventDelayMs = 0;
    world.ai.chatScript = (body) => (body.stream ? { deltas: [{ content: 'Ferns and **hostas** grow well in shade.' }] } : { deltas: [{ content: 'Title' }] });
    audio.speech = () => ({ chunks: silentMp3(60, 6) });
    audio.chunkDelayMs = 100;
    await page.getByRole('textbox', { name: 'Message' }).fill('What grows in shade?');
    await page.getByRole('button', { name: 'Send' }).click();
    const answer = page.locator('.message.assistant').last();
    await waitOrExplain(page, answer.getByRole('button', { name: 'Read aloud' }));
    await answer.getByRole('button', { name: 'Read aloud' }).click();
    await answer.getByRole('button', { name: 'Stop reading' }).waitFor();
    // Playing: time moves in the audio element.
    await page.waitForFunction(() => {
      const a = document.querySelector<HTMLAudioElement>('.message.assistant:last-of-type audio.speech');
      return !!a && a.currentTime > 0;
    }, undefined, { timeout: 20_000 });
    // The server was asked for the answer's words, without the Markdown.
    expect(audio.speeches.at(-1)!.body.input).toBe('Ferns and hostas grow well in shade.');
    expect(audio.speeches.at(-1)!.body.response_format).toBe('mp3');
    await context.close();
  });
});
