import { Type } from 'typebox';
import { EmailSchema, PasswordSchema } from '../users/index.js';

export const ForgotPasswordBody = Type.Object({ email: EmailSchema }, { additionalProperties: false });

export const ResetPasswordBody = Type.Object(
  {
    // Loose on purpose: any token that is not a live one gets the same reset_token_invalid answer.
    token: Type.String({ minLength: 1, maxLength: 512 }),
    new_password: PasswordSchema,
  },
  { additionalProperties: false },
);

export const ResetAccepted = Type.Object({ message: Type.String() });
