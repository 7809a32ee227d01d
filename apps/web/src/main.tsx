/**
 * Entry point. Zod must be configured before any of the contract's schemas is built (see
 * lib/zodJitless.ts); a static import cannot guarantee that once the bundler splits chunks, so the
 * rest of the console (everything that imports the contract) is imported only after this module ran.
 */
import './lib/zodJitless';
import '@mantine/core/styles.css';

const root = document.getElementById('root');
if (root) {
  import('./app/bootstrap').then(
    ({ start }) => start(root),
    (error: unknown) => console.error('Lendlock console could not be loaded', error),
  );
}
