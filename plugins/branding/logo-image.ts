import { unprocessable, unsupportedMediaType } from '../../core/errors.js';

export const LOGO_MAX_UPLOAD_BYTES = 2 * 1024 * 1024;
const LOGO_MAX_SIDE = 512;
/** Larger inputs are refused before decoding: a tiny compressed file can declare gigapixels. */
const LOGO_MAX_INPUT_PIXELS = 4096 * 4096;

const ACCEPTED_FORMATS = new Set(['png', 'jpeg', 'webp', 'gif', 'svg']);

interface NormalisedLogo {
  png: Buffer;
  width: number;
  height: number;
}

const tooLarge = () =>
  unprocessable('image_too_large', `The image has more than ${LOGO_MAX_INPUT_PIXELS} pixels (4096x4096)`, 'body.file');

/** sharp reports limitInputPixels only through its message. */
const exceedsPixelLimit = (error: unknown) => error instanceof Error && /pixel limit/i.test(error.message);

/**
 * Decodes an uploaded image and re-encodes it as a metadata-free PNG within 512x512.
 * Re-encoding is the sanitiser: SVG is rasterised, so no script or external reference survives.
 */
export async function normaliseLogo(input: Buffer): Promise<NormalisedLogo> {
  // Loaded on the first upload: sharp and libvips cost about 19 MB resident that a service without a logo never needs.
  const { default: sharp } = await import('sharp');
  const options = { limitInputPixels: LOGO_MAX_INPUT_PIXELS };
  let format: string | undefined;
  let pixels = 0;
  try {
    const metadata = await sharp(input, options).metadata();
    format = metadata.format;
    pixels = (metadata.width ?? 0) * (metadata.height ?? 0);
  } catch (error) {
    if (exceedsPixelLimit(error)) throw tooLarge();
    // anything else undecodable is refused just below as unsupported
  }
  if (!format || !ACCEPTED_FORMATS.has(format)) {
    throw unsupportedMediaType('The logo must be a PNG, JPEG, WebP, GIF or SVG image');
  }
  if (pixels > LOGO_MAX_INPUT_PIXELS) throw tooLarge();

  try {
    const { data, info } = await sharp(input, options)
      .rotate() // applies EXIF orientation before the metadata is dropped
      .resize({ width: LOGO_MAX_SIDE, height: LOGO_MAX_SIDE, fit: 'inside', withoutEnlargement: true })
      .png()
      .toBuffer({ resolveWithObject: true });
    return { png: data, width: info.width, height: info.height };
  } catch (error) {
    if (exceedsPixelLimit(error)) throw tooLarge();
    throw unsupportedMediaType('The logo image could not be decoded');
  }
}
