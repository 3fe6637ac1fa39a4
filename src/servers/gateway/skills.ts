import {
  Client,
  InMemoryTransport,
  type ReadResourceResult,
  type ResourceTemplateType as ResourceTemplate,
} from '@modelcontextprotocol/client';
import { McpServer, type Server } from '@modelcontextprotocol/server';
import {
  RESOURCES_DIRECTORY_READ_METHOD,
  SKILLS_EXTENSION_ID,
  SKILLS_GET_METHOD,
  SKILLS_LIST_METHOD,
} from '@modelcontextprotocol/server/ext/skills';
import * as z from 'zod';
import type { SkillLibrary } from '../../skills/library.js';
import { VERSION } from '../../version.js';
import { loadSkillsCatalog } from '../skills/start.js';

const SKILL_SCHEME = 'skill://';
/** The gateway checks nothing itself: the skills server behind it validates params, its client the result. */
const Passthrough = z.looseObject({});

/**
 * tack's own skills in `tack serve`. The Skills extension is the SDK's (SkillCatalog), and it attaches to an
 * McpServer; the gateway is a low-level Server that already owns resources/read and the resource listings. So
 * the skills server runs in process behind an in-memory transport, and the gateway forwards to it: skills/list,
 * skills/get, resources/directory/read, and resources/read of skill:// URIs, plus its resource template.
 */
export class GatewaySkills {
  readonly #client: Client;
  readonly #close: () => Promise<void>;
  readonly #templates: ResourceTemplate[];
  readonly #directoryRead: boolean;
  readonly skills: number;

  private constructor(
    client: Client,
    close: () => Promise<void>,
    templates: ResourceTemplate[],
    skills: number,
  ) {
    this.#client = client;
    this.#close = close;
    this.#templates = templates;
    const capability = client.getServerCapabilities()?.extensions?.[SKILLS_EXTENSION_ID] as
      | { directoryRead?: boolean }
      | undefined;
    this.#directoryRead = capability?.directoryRead === true;
    this.skills = skills;
  }

  static async start(library: SkillLibrary, onWarning?: (warning: string) => void): Promise<GatewaySkills> {
    // Only the extension: no index or tools, which would load the tokenizer for text nobody reads here.
    const { catalog, uris } = await loadSkillsCatalog(library, onWarning);
    const server = new McpServer({ name: 'tack-skills', version: VERSION });
    catalog.attach(server);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'tack-gateway', version: VERSION });
    await client.connect(clientSide);
    const { resourceTemplates } = await client.listResourceTemplates();
    return new GatewaySkills(
      client,
      async () => {
        await client.close();
        await server.close();
      },
      resourceTemplates,
      uris.length,
    );
  }

  /**
   * Declares the extension on a gateway server and forwards its methods (before the server connects). The
   * in-memory hop speaks 2025 (an in-memory pair negotiates no 2026-07-28 era), whose results carry no caching
   * fields; a 2026-07-28 client requires them, so it gets the extension's defaults: ttlMs 0, private.
   */
  attach(server: Server, era: 'modern' | 'legacy'): void {
    const cache = era === 'modern' ? { ttlMs: 0, cacheScope: 'private' } : {};
    const forward = (method: string) => async (params: Record<string, unknown>) => ({
      ...cache,
      ...((await this.#client.request({ method, params }, Passthrough)) as Record<string, unknown>),
    });
    server.setRequestHandler(SKILLS_LIST_METHOD, { params: Passthrough }, forward(SKILLS_LIST_METHOD));
    server.setRequestHandler(SKILLS_GET_METHOD, { params: Passthrough }, forward(SKILLS_GET_METHOD));
    if (this.#directoryRead) {
      server.setRequestHandler(
        RESOURCES_DIRECTORY_READ_METHOD,
        { params: Passthrough },
        forward(RESOURCES_DIRECTORY_READ_METHOD),
      );
    }
    server.registerCapabilities({
      extensions: { [SKILLS_EXTENSION_ID]: this.#directoryRead ? { directoryRead: true } : {} },
    });
  }

  owns(uri: string): boolean {
    return uri.startsWith(SKILL_SCHEME);
  }

  read(uri: string): Promise<ReadResourceResult> {
    return this.#client.readResource({ uri });
  }

  get templates(): readonly ResourceTemplate[] {
    return this.#templates;
  }

  close(): Promise<void> {
    return this.#close();
  }
}
