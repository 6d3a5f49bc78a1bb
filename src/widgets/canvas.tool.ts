import type { ToolSource } from '../tools/tool.types';
import { createWidget } from './widget.store';

/** `generate_canvas`, to the registry (src/tools/): a canvas widget the user opens beside the chat (docs/research.md, "Tools"). */
export const canvasToolSource: ToolSource = {
  id: 'canvas',
  label: 'Canvas',
  priority: 60,
  async tools({ deps, conversationId, responseId }) {
    return [
      {
        name: 'generate_canvas',
        label: 'Canvas',
        description: 'Create a canvas: a standalone document (report, plan, code, essay) the user can open and edit beside the chat.',
        parameters: {
          type: 'object',
          properties: {
            topic: { type: 'string', description: 'Subject of the document, used as its title' },
            goal: { type: 'string', description: 'What the document is for (optional)' },
            content: { type: 'string', description: 'The document in Markdown' },
          },
          required: ['topic', 'content'],
        },
        async run(args, emit, callId, callKey) {
          const topic = typeof args.topic === 'string' && args.topic.trim() ? args.topic.trim() : 'Canvas';
          const goal = typeof args.goal === 'string' ? args.goal : undefined;
          const content = typeof args.content === 'string' ? args.content : '';
          emit({ type: 'generate_canvas.in_progress', itemId: callId, topic, ...(goal ? { goal } : {}) });
          const widget = await deps.store.read((tx) =>
            createWidget(
              tx,
              {
                conversationId,
                responseId,
                widgetType: 'canvas',
                title: topic,
                document: { topic, goal: goal ?? null, content },
                // Committed before this call's events and output are (a moment later): a restart in
                // between runs the call again, and must find this canvas, not make a second one.
                origin: `${responseId}:${callKey}`,
              },
              deps.now(),
            ),
          );
          emit({ type: 'widget.created', widgetId: widget.id, widgetType: 'canvas', responseId });
          return `Canvas "${topic}" created (widget ${widget.id}).`;
        },
      },
    ];
  },
};
