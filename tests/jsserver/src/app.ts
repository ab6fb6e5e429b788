import { finalAnswerApp } from "@evoscientist/final-answer/hono";

export const app = finalAnswerApp();
