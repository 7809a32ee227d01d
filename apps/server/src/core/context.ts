/**
 * The application context: every service of the app as container.ts builds it, fully typed. Tests and
 * the demo read it from `app.ctx`; routes receive a `RouteContext`, which has no database.
 */
import type { buildContainer } from '../container';

export type AppContext = Awaited<ReturnType<typeof buildContainer>>;

/** What routes receive: the services and the configuration, never the database (layers.test.ts). */
export type RouteContext = Omit<AppContext, 'db' | 'database'>;
