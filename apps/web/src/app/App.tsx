import { MantineProvider } from '@mantine/core';
import { type QueryClient, QueryClientProvider } from '@tanstack/react-query';
import type { createBrowserRouter } from 'react-router';
import { RouterProvider } from 'react-router/dom';
import { type Services, ServicesProvider } from './services';
import { cssVariablesResolver, theme } from './theme';
import './a11y.css';

export function App(props: {
  services: Services;
  router: ReturnType<typeof createBrowserRouter>;
  queryClient: QueryClient;
  /** CSP nonce for the `<style>` tags Mantine writes (undefined under `vite dev`). */
  styleNonce: string | undefined;
}) {
  const { styleNonce } = props;
  return (
    <ServicesProvider services={props.services}>
      <MantineProvider
        theme={theme}
        cssVariablesResolver={cssVariablesResolver}
        {...(styleNonce ? { getStyleNonce: () => styleNonce } : {})}
      >
        <QueryClientProvider client={props.queryClient}>
          <RouterProvider router={props.router} />
        </QueryClientProvider>
      </MantineProvider>
    </ServicesProvider>
  );
}
