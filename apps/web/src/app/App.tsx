import { createTheme, MantineProvider } from '@mantine/core';
import { type QueryClient, QueryClientProvider } from '@tanstack/react-query';
import type { createBrowserRouter } from 'react-router';
import { RouterProvider } from 'react-router/dom';
import { type Services, ServicesProvider } from './services';

const theme = createTheme({ primaryColor: 'blue', defaultRadius: 'sm' });

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
      <MantineProvider theme={theme} {...(styleNonce ? { getStyleNonce: () => styleNonce } : {})}>
        <QueryClientProvider client={props.queryClient}>
          <RouterProvider router={props.router} />
        </QueryClientProvider>
      </MantineProvider>
    </ServicesProvider>
  );
}
