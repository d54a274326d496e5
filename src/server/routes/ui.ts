/** The dashboard at /ui/ (docs/dashboard.md). */
import type { FastifyPluginAsync } from 'fastify';

export const uiRoutes: FastifyPluginAsync = async () => {};
