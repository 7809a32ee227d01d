/**
 * The request log lines (`incoming request`, `request completed`). The device API's calls that succeed
 * are logged at `debug`: a fleet's registrations are one pair of lines per phone (1,200 when the demo's
 * 300 start), and would bury everything else at `info`. A device call that fails is logged as any other.
 */
import { type FastifyReply, type FastifyRequest, LogController } from 'fastify';

const isDeviceCall = (request: FastifyRequest) => request.url.startsWith('/device/');

export class RequestLogs extends LogController {
  override incomingRequest(request: FastifyRequest, reply: FastifyReply): void {
    if (isDeviceCall(request)) request.log.debug({ req: request }, 'incoming request');
    else super.incomingRequest(request, reply);
  }

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    if (!error && reply.statusCode < 400 && isDeviceCall(request)) {
      reply.log.debug({ res: reply, responseTime: reply.elapsedTime }, 'request completed');
    } else super.requestCompleted(error, request, reply);
  }
}
