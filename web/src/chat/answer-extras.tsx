import type { AnswerExtras } from './answer-parts';
import { useContext } from 'preact/hooks';
import { CanvasButton } from './canvas';
import { ModelNames } from './chat-models';
import { CodeRuns } from './code-runs';
import { MadeVideos } from './made-videos';

/** What the assistant did and made besides its text: tools used, code run, documents read, reasoning, images, videos and canvases. */
export function ExtrasBefore({ extras }: { extras: AnswerExtras }) {
  return (
    <>
      {extras.reasoning.trim() && (
        <details class="reasoning">
          <summary>Reasoning</summary>
          <p class="plain">{extras.reasoning.trim()}</p>
        </details>
      )}
      {extras.activity.length > 0 && (
        <ul class="activity" aria-label="What the assistant did">
          {extras.activity.map((a) => (
            <li key={a.id || a.label} class={`activity-${a.state}`}>
              {a.label}
              {a.detail && <span class="hint"> · {a.detail}</span>}
            </li>
          ))}
        </ul>
      )}
      <CodeRuns runs={extras.code} />
    </>
  );
}

export function ExtrasAfter({ extras, onOpenCanvas }: { extras: AnswerExtras; onOpenCanvas?(widgetId: string): void }) {
  return (
    <>
      {extras.images.length > 0 && (
        <ul class="made-images" aria-label="Images the assistant made">
          {extras.images.map((img, i) => (
            <li key={img.url}>
              <a href={img.url} target="_blank" rel="noopener">
                <img src={img.url} alt={`Image ${i + 1} the assistant made`} loading="lazy" />
              </a>
            </li>
          ))}
        </ul>
      )}
      <MadeVideos videos={extras.videos} />
      {extras.canvases.length > 0 && onOpenCanvas && (
        <p class="canvases">
          {extras.canvases.map((id) => (
            <CanvasButton key={id} widgetId={id} onOpen={onOpenCanvas} />
          ))}
        </p>
      )}
      {extras.documents.length > 0 && (
        <section class="cited" aria-label="Documents read">
          <h4>Documents read</h4>
          <ol>
            {extras.documents.map((d) => (
              <li key={d.fileId}>
                <a href={`/api/files/${encodeURIComponent(d.fileId)}/content`} target="_blank" rel="noopener">
                  {d.filename}
                </a>
              </li>
            ))}
          </ol>
        </section>
      )}
    </>
  );
}

/** The model's name under the answer, when the server said it. */
export function ModelName({ model }: { model?: string }) {
  const names = useContext(ModelNames);
  return model ? <span class="model-name hint">{names.get(model) ?? model}</span> : null;
}
