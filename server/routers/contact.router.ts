import { ContactInput, ContactResult, submitContact } from '../contact/submit-contact.ts';
import { FeedbackInput, FeedbackResult, submitFeedback } from '../contact/submit-feedback.ts';
import { publicProcedure, router, userProcedure } from '../trpc/trpc.ts';

export const contactRouter = router({
  contact: publicProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/contact',
        tags: ['contact'],
        summary: 'Write to the team (no sign-in)',
        description:
          'Notifies CONTACT_EMAIL with Reply-To on the sender; the message is kept even when the notification fails (`notified: false`). `website` is a honeypot the form hides: filled, nothing is kept or sent. 429 after 5 messages per IP per hour; 503 SERVICE_UNAVAILABLE when CONTACT_EMAIL is not set.',
      },
    })
    .input(ContactInput)
    .output(ContactResult)
    .mutation(({ ctx, input }) => submitContact(ctx.deps, input, ctx.req.ip)),
  feedback: userProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/feedback',
        tags: ['contact'],
        summary: 'Rate the conversion of one of your files',
        description:
          'Body `{fileId, rating 1-5, comment?}`. Kept with the job and its report verdict, and sent to CONTACT_EMAIL with Reply-To on you. 404 for a file that is not yours, 409 CONFLICT when it is not converted, 429 after 20 in an hour.',
        protect: true,
      },
    })
    .input(FeedbackInput)
    .output(FeedbackResult)
    .mutation(({ ctx, input }) => submitFeedback(ctx.deps, ctx.user, input)),
});
