import type { MadeVideo } from './answer-parts';

/**
 * The videos an answer made (`generate_video`, docs/video.md): while the job runs a status line,
 * then the browser's own player (only the metadata is fetched until it is played) and a download
 * link, or why there is no video. The video is the user's file, served by Parley.
 */
export function MadeVideos({ videos }: { videos: MadeVideo[] }) {
  if (!videos.length) return null;
  return (
    <ul class="made-videos" aria-label="Videos the assistant made">
      {videos.map((v, i) => (
        <li key={v.id || i} class={`made-video made-video-${v.state}`}>
          {v.state === 'pending' && (
            <p role="status" class="hint">
              Making a video… this can take a few minutes.{v.prompt && <span class="made-video-prompt"> “{v.prompt}”</span>}
            </p>
          )}
          {v.state === 'done' && v.url && (
            <>
              <video controls preload="metadata" src={v.url} aria-label={`Video ${i + 1} the assistant made`} />
              <a class="hint" href={v.url} download="">
                Download the video
              </a>
            </>
          )}
          {v.state === 'failed' && <p class="made-video-error">The video could not be made: {v.error}</p>}
        </li>
      ))}
    </ul>
  );
}
