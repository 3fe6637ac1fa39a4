import { ProtocolError, SdkError, SdkErrorCode, SdkHttpError } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { classifyFailure, requestFailure } from '../../src/mcp/failures.js';

describe('classifyFailure: which failures mean the link is gone', () => {
  it('keeps answers from a live server apart from broken links', () => {
    expect(classifyFailure(new ProtocolError(-32602, 'bad params'))).toBe('protocol');
    expect(classifyFailure(new SdkError(SdkErrorCode.InputRequiredRoundsExceeded, 'too many rounds'))).toBe(
      'protocol',
    );
    expect(classifyFailure(new SdkError(SdkErrorCode.CapabilityNotSupported, 'no handler'))).toBe('protocol');
    expect(classifyFailure(new SdkError(SdkErrorCode.InvalidResult, 'schema'))).toBe('protocol');
    expect(
      classifyFailure(new SdkHttpError(SdkErrorCode.ClientHttpNotImplemented, 'HTTP 500', { status: 500 })),
    ).toBe('protocol');
    expect(classifyFailure(new SdkError(SdkErrorCode.RequestTimeout, 'slow'))).toBe('timeout');
    expect(classifyFailure(new SdkError(SdkErrorCode.ConnectionClosed, 'closed'))).toBe('closed');
    expect(classifyFailure(new SdkError(SdkErrorCode.SendFailed, 'EPIPE'))).toBe('transport');
    expect(
      classifyFailure(new SdkHttpError(SdkErrorCode.ClientHttpNotImplemented, 'gone', { status: 404 })),
    ).toBe('transport');
    expect(classifyFailure(new TypeError('fetch failed'))).toBe('transport');
    const abort = new Error('This operation was aborted');
    abort.name = 'AbortError';
    expect(classifyFailure(abort)).toBe('aborted');
  });

  it('words each kind for the user, naming the server and the request', () => {
    const ctx = { server: 'gh', what: 'tools/call "x"', tool: 'x', timeoutMs: 5, stderr: () => ['boom'] };
    expect(
      requestFailure(new SdkHttpError(SdkErrorCode.ClientHttpAuthentication, 'denied', { status: 401 }), ctx),
    ).toMatchObject({
      code: 'REQUEST_FAILED',
      hint: expect.stringContaining('mcpServers.gh.headers'),
      subject: { server: 'gh', tool: 'x' },
    });
    expect(requestFailure(new SdkError(SdkErrorCode.RequestTimeout, 't'), ctx).message).toBe(
      'tools/call "x" on server "gh" timed out after 5 ms without progress',
    );
    expect(requestFailure(new SdkError(SdkErrorCode.ConnectionClosed, 'c'), ctx)).toMatchObject({
      code: 'SERVER_CRASHED',
      details: ['boom'],
    });
    expect(requestFailure(new TypeError('fetch failed'), ctx).code).toBe('SERVER_UNAVAILABLE');
  });
});
