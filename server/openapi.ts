import { generateOpenApiDocument } from 'trpc-to-openapi';
import { appRouter } from './routers/index.ts';

/** The OpenAPI 3 document of every REST route; committed as openapi.json and served at /openapi.json. */
export function buildOpenApiDocument() {
  return generateOpenApiDocument(appRouter, {
    title: 'Folio API',
    description: 'PDF to accessible HTML conversion, with email delivery and customer webhooks.',
    version: '0.1.0',
    baseUrl: '/',
    docsUrl: '/docs',
    securitySchemes: {
      Authorization: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
    },
  });
}
