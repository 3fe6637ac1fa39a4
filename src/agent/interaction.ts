import type { Client } from '@modelcontextprotocol/client';
import { generateText, type LanguageModel, type ModelMessage } from 'ai';
import { aiTelemetry } from '../telemetry/spans.js';

/** A server's question for the user (elicitation), form or URL mode, as the harness shows it. */
export interface ElicitationQuestion {
  server: string;
  message: string;
  /** Form mode: the JSON Schema of the answer. */
  requestedSchema?: Record<string, unknown>;
  /** URL mode: the page the user must visit. */
  url?: string;
}

/** The user's answer to a server's question: accepted with content, declined or cancelled. */
export interface ElicitationAnswer {
  action: 'accept' | 'decline' | 'cancel';
  content?: Record<string, unknown>;
}

/** What a server wants the host's model to write (sampling), for the user to approve first. */
export interface SamplingRequest {
  server: string;
  systemPrompt?: string;
  messages: Array<{ role: string; text: string }>;
  maxTokens: number;
}

/** The person at the terminal (or a UI): answers servers' questions and approves their sampling requests. */
export interface AgentInteraction {
  /** Puts a server's question to the user. */
  elicit(question: ElicitationQuestion): Promise<ElicitationAnswer>;
  /** Whether a server may use the model for this request. */
  approveSampling(request: SamplingRequest): Promise<boolean>;
}

/** The client capabilities to declare when these handlers are installed. */
/** A typed answer to one field of an elicitation form, from what a person typed (numbers, yes/no, text). */
export function elicitationValue(type: string | undefined, raw: string): unknown {
  if (type === 'number' || type === 'integer') return Number(raw);
  if (type === 'boolean') return /^(y|yes|true)$/i.test(raw.trim());
  return raw;
}

export const INTERACTIVE_CAPABILITIES = { elicitation: { form: {}, url: {} }, sampling: {} };

/**
 * Installs elicitation and sampling handlers on every server's client (McpHost's `configureClient`): questions
 * go to the user; sampling goes to the host's own model, only after the user approved that request, and the
 * server gets the text back. Without a user (`interaction` undefined) questions are declined and sampling refused.
 */
export function interactionHandlers(
  interaction: AgentInteraction | undefined,
  model: { model: LanguageModel; spec: string },
): (client: Client, server: string) => void {
  return (client, server) => {
    client.setRequestHandler('elicitation/create', async (request) => {
      const params = request.params as Record<string, unknown>;
      if (!interaction) return { action: 'decline' as const };
      const answer = await interaction.elicit({
        server,
        message: String(params.message ?? ''),
        ...(typeof params.url === 'string' ? { url: params.url } : {}),
        ...(typeof params.requestedSchema === 'object' && params.requestedSchema !== null
          ? { requestedSchema: params.requestedSchema as Record<string, unknown> }
          : {}),
      });
      return answer.action === 'accept' && answer.content
        ? { action: 'accept' as const, content: answer.content as Record<string, string | number | boolean> }
        : { action: answer.action };
    });
    client.setRequestHandler('sampling/createMessage', async (request) => {
      const params = request.params as {
        messages: Array<{ role: 'user' | 'assistant'; content: unknown }>;
        systemPrompt?: string;
        maxTokens: number;
      };
      const messages = params.messages.map((m) => ({ role: m.role, text: textOf(m.content) }));
      const approved =
        interaction !== undefined &&
        (await interaction.approveSampling({
          server,
          messages,
          maxTokens: params.maxTokens,
          ...(params.systemPrompt ? { systemPrompt: params.systemPrompt } : {}),
        }));
      if (!approved) throw new Error(`the user did not approve ${server}'s request to use the model`);
      const result = await generateText({
        model: model.model,
        ...(params.systemPrompt ? { system: params.systemPrompt } : {}),
        messages: messages.map((m) => ({ role: m.role, content: m.text }) as ModelMessage),
        maxOutputTokens: params.maxTokens,
        experimental_telemetry: aiTelemetry('tack.sampling'),
      });
      return {
        role: 'assistant' as const,
        content: { type: 'text' as const, text: result.text },
        model: model.spec,
        stopReason: result.finishReason === 'length' ? 'maxTokens' : 'endTurn',
      };
    });
  };
}

function textOf(content: unknown): string {
  const blocks = Array.isArray(content) ? content : [content];
  return blocks
    .map((b) =>
      typeof b === 'object' && b !== null && (b as { type?: unknown }).type === 'text'
        ? String((b as { text: unknown }).text)
        : '[non-text content]',
    )
    .join('\n');
}
