import * as z from 'zod';
import type { McpServer } from '@modelcontextprotocol/server';

/**
 * A prompt a client offers its user as a command ("/research …" in a desktop agent): a question
 * handed to the model with how to use the research tools, so the answer is Parley's cited report.
 */
export function registerResearchPrompt(server: McpServer) {
  server.registerPrompt(
    'research',
    {
      title: 'Deep research with Parley',
      description: 'Research a question with Parley: a cited report from the web and your documents, which you also find in Parley afterwards.',
      argsSchema: z.object({ question: z.string().min(1).max(20_000).describe('What to research.') }),
    },
    ({ question }) => ({
      messages: [
        {
          role: 'user',
          content: {
            type: 'text',
            text:
              `Research this with Parley's deep research: ${question}\n\n` +
              'Call start_research with the question, then follow_research with its researchId until it answers done (call it again with `after` while it is still running). ' +
              'Then answer from the report, citing its sources.',
          },
        },
      ],
    }),
  );
}
