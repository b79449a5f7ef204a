"""Synthetic photos of a page lying in perspective, for ScriptScope's trained demo.

make_demo.py trains the demo model on these scenes; tests/fixtures/eval_demo_model.py measures it on
scenes built the same way over backgrounds it never saw (real photographs, clutter, other lighting).
Everything is drawn with NumPy and OpenCV from a numpy Generator, so a seed gives the same pixels.
"""
import cv2
import numpy as np

W, H = 640, 480  # the photo
PAGE_W, PAGE_H = 400, 560  # the page as drawn, before it is put in the photo
KINDS = ["letter", "invoice", "chart", "form"]

_FONTS = [cv2.FONT_HERSHEY_SIMPLEX, cv2.FONT_HERSHEY_DUPLEX, cv2.FONT_HERSHEY_COMPLEX,
          cv2.FONT_HERSHEY_PLAIN, cv2.FONT_HERSHEY_TRIPLEX]
_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _word(rng, lo=2, hi=9):
    return "".join(rng.choice(list(_LETTERS), int(rng.integers(lo, hi))))


def _ink(rng):
    v = int(rng.integers(10, 90))
    return (v + int(rng.integers(0, 30)), v, v + int(rng.integers(0, 40)))


def _text_line(img, rng, x, y, width, scale, ink):
    font = _FONTS[int(rng.integers(len(_FONTS)))]
    cursor = x
    while cursor < x + width:
        word = _word(rng)
        (tw, _), _ = cv2.getTextSize(word, font, scale, 1)
        if cursor + tw > x + width:
            break
        cv2.putText(img, word, (cursor, y), font, scale, ink, 1, cv2.LINE_AA)
        cursor += tw + int(10 * scale) + 4


def _heading(img, rng, ink):
    if rng.random() < 0.5:
        colour = tuple(int(c) for c in rng.integers(40, 200, 3))
        cv2.rectangle(img, (30, 28), (PAGE_W - 30, 72), colour, -1)
        cv2.putText(img, _word(rng, 5, 11).upper(), (42, 62), cv2.FONT_HERSHEY_DUPLEX, 0.9,
                    (245, 245, 245), 2, cv2.LINE_AA)
    else:
        cv2.putText(img, _word(rng, 5, 11).capitalize(), (30, 62), cv2.FONT_HERSHEY_DUPLEX,
                    1.0, ink, 2, cv2.LINE_AA)


def draw_page(kind, rng):
    """A page of the given kind (an index into KINDS), PAGE_H x PAGE_W x 3, BGR uint8."""
    tint = rng.integers(215, 256, 3)
    page = np.empty((PAGE_H, PAGE_W, 3), np.uint8)
    page[:] = tint
    ink = _ink(rng)
    _heading(page, rng, ink)
    if kind == 0:  # letter: paragraphs of text
        y = 110
        while y < PAGE_H - 40:
            indent = 30 + (24 if rng.random() < 0.3 else 0)
            _text_line(page, rng, indent, y, int(rng.integers(220, PAGE_W - indent - 30)), 0.5, ink)
            y += int(rng.integers(20, 26))
            if rng.random() < 0.15:
                y += 18
    elif kind == 1:  # invoice: a ruled table of numbers and a total
        rows, cols = int(rng.integers(8, 15)), int(rng.integers(3, 5))
        top, left, right = 110, 30, PAGE_W - 30
        row_h = int(rng.integers(24, 32))
        bottom = min(top + rows * row_h, PAGE_H - 80)
        for r in range(rows + 1):
            y = min(top + r * row_h, bottom)
            cv2.line(page, (left, y), (right, y), ink, 1 + (r == 1))
        for c in range(cols + 1):
            x = left + (right - left) * c // cols
            cv2.line(page, (x, top), (x, bottom), ink, 1)
        for r in range(rows):
            for c in range(cols):
                y = top + r * row_h + row_h - 8
                if y > bottom - 4:
                    continue
                x = left + (right - left) * c // cols + 6
                text = _word(rng, 3, 7) if c == 0 else f"{rng.integers(1, 9999)}.{rng.integers(10, 99)}"
                cv2.putText(page, text, (x, y), cv2.FONT_HERSHEY_SIMPLEX, 0.45, ink, 1, cv2.LINE_AA)
        cv2.putText(page, f"TOTAL {rng.integers(100, 99999)}.00", (right - 190, bottom + 40),
                    cv2.FONT_HERSHEY_DUPLEX, 0.7, ink, 2, cv2.LINE_AA)
    elif kind == 2:  # chart: a few lines of text over a bar or line chart
        for i in range(int(rng.integers(2, 5))):
            _text_line(page, rng, 30, 105 + 22 * i, PAGE_W - 60, 0.5, ink)
        base, top = PAGE_H - 60, 230
        cv2.line(page, (50, base), (PAGE_W - 30, base), ink, 2)
        cv2.line(page, (50, top), (50, base), ink, 2)
        n = int(rng.integers(4, 9))
        step = (PAGE_W - 100) // n
        heights = rng.integers(30, base - top, n)
        if rng.random() < 0.6:
            for i, h in enumerate(heights):
                colour = tuple(int(c) for c in rng.integers(30, 220, 3))
                x = 60 + i * step
                cv2.rectangle(page, (x, base - int(h)), (x + step * 2 // 3, base), colour, -1)
        else:
            colour = tuple(int(c) for c in rng.integers(30, 220, 3))
            pts = np.array([[60 + i * step, base - int(h)] for i, h in enumerate(heights)], np.int32)
            cv2.polylines(page, [pts], False, colour, 3, cv2.LINE_AA)
            for p in pts:
                cv2.circle(page, tuple(int(v) for v in p), 5, colour, -1, cv2.LINE_AA)
    else:  # form: labelled boxes to fill in and check boxes
        y = 105
        while y < PAGE_H - 60:
            label = _word(rng, 4, 9).capitalize() + ":"
            cv2.putText(page, label, (30, y + 20), cv2.FONT_HERSHEY_SIMPLEX, 0.5, ink, 1, cv2.LINE_AA)
            if rng.random() < 0.65:
                cv2.rectangle(page, (140, y), (PAGE_W - 30, y + 30), ink, 1)
            else:
                for i in range(int(rng.integers(2, 5))):
                    x = 140 + i * 60
                    cv2.rectangle(page, (x, y + 6), (x + 18, y + 24), ink, 1)
                    if rng.random() < 0.4:
                        cv2.line(page, (x + 3, y + 15), (x + 8, y + 21), ink, 2)
                        cv2.line(page, (x + 8, y + 21), (x + 16, y + 8), ink, 2)
            y += int(rng.integers(44, 56))
    return page


# ---- backgrounds ----

def _noise_field(rng, octaves=4, channels=3):
    field = np.zeros((H, W, channels), np.float32)
    for o in range(octaves):
        gh, gw = 3 * 2 ** o + int(rng.integers(0, 3)), 4 * 2 ** o + int(rng.integers(0, 3))
        grid = rng.standard_normal((gh, gw, channels)).astype(np.float32)
        field += cv2.resize(grid, (W, H), interpolation=cv2.INTER_CUBIC).reshape(H, W, channels) / (1.6 ** o)
    return field


def _random_colour(rng, lo=0, hi=256):
    return tuple(int(c) for c in rng.integers(lo, hi, 3))


def _clutter(img, rng, count, bright_papers):
    for _ in range(count):
        shape = rng.random()
        colour = _random_colour(rng)
        if shape < 0.35:
            centre = (float(rng.uniform(-50, W + 50)), float(rng.uniform(-50, H + 50)))
            size = (float(rng.uniform(20, 260)), float(rng.uniform(20, 200)))
            box = cv2.boxPoints((centre, size, float(rng.uniform(0, 180)))).astype(np.int32)
            cv2.fillPoly(img, [box], colour, cv2.LINE_AA)
        elif shape < 0.6:
            cv2.ellipse(img, (int(rng.integers(0, W)), int(rng.integers(0, H))),
                        (int(rng.integers(10, 150)), int(rng.integers(10, 150))), float(rng.uniform(0, 180)),
                        0, 360, colour, -1, cv2.LINE_AA)
        elif shape < 0.85:
            p = rng.integers(-100, max(W, H) + 100, 4)
            cv2.line(img, (int(p[0]), int(p[1])), (int(p[2]), int(p[3])), colour, int(rng.integers(1, 12)),
                     cv2.LINE_AA)
        else:
            cv2.putText(img, _word(rng, 3, 10), (int(rng.integers(0, W)), int(rng.integers(0, H))),
                        _FONTS[int(rng.integers(len(_FONTS)))], float(rng.uniform(0.5, 3.0)), colour,
                        int(rng.integers(1, 5)), cv2.LINE_AA)
    for _ in range(bright_papers):
        # Paper-like distractors: bright quadrilaterals, plain or with a few lines, smaller than pages or cut
        # by the frame, so that only content, edges and the whole shape tell a page apart.
        centre = (float(rng.uniform(0, W)), float(rng.uniform(0, H)))
        size = (float(rng.uniform(40, 260)), float(rng.uniform(30, 200)))
        box = cv2.boxPoints((centre, size, float(rng.uniform(0, 180)))).astype(np.float32)
        box += rng.normal(0, 8, box.shape).astype(np.float32)
        cv2.fillPoly(img, [box.astype(np.int32)], _random_colour(rng, 200, 256), cv2.LINE_AA)
        if rng.random() < 0.4:
            x0, y0 = box.min(0)
            x1, y1 = box.max(0)
            for y in np.arange(y0 + 12, y1 - 8, 14):
                cv2.line(img, (int(x0 + 10), int(y)), (int(x0 + (x1 - x0) * 0.6), int(y)), _ink(rng), 2)


def synthetic_background(rng):
    """A desk-like background drawn from noise, gradients, shapes and bright paper-like distractors."""
    style = rng.random()
    base = np.array(rng.integers(0, 256, 3), np.float32)
    if style < 0.3:  # smooth coloured noise (wood, fabric, carpet at a distance)
        img = base + _noise_field(rng, octaves=int(rng.integers(2, 6))) * float(rng.uniform(10, 60))
    elif style < 0.5:  # stripes or grain
        yy, xx = np.mgrid[0:H, 0:W].astype(np.float32)
        angle = rng.uniform(0, np.pi)
        t = xx * np.cos(angle) + yy * np.sin(angle)
        wave = np.sin(t / rng.uniform(3, 40) + _noise_field(rng, 3, 1)[..., 0] * rng.uniform(0, 3))
        img = base + wave[..., None] * np.float32(rng.uniform(10, 60)) * rng.uniform(0.3, 1.0, 3).astype(np.float32)
    elif style < 0.7:  # a gradient
        yy, xx = np.mgrid[0:H, 0:W].astype(np.float32)
        other = np.array(rng.integers(0, 256, 3), np.float32)
        t = ((xx / W) * rng.uniform(-1, 1) + (yy / H) * rng.uniform(-1, 1))[..., None]
        img = base + (other - base) * (t - t.min()) / max(float(t.max() - t.min()), 1e-3)
    else:  # fine texture: high-frequency noise
        img = base + rng.standard_normal((H, W, 3)).astype(np.float32) * float(rng.uniform(5, 50))
        img = cv2.GaussianBlur(img, (0, 0), float(rng.uniform(0.5, 2.0)))
    img = np.clip(img, 0, 255).astype(np.uint8)
    _clutter(img, rng, int(rng.integers(0, 25)), int(rng.integers(0, 4)) if rng.random() < 0.6 else 0)
    if rng.random() < 0.5:
        img = cv2.GaussianBlur(img, (0, 0), float(rng.uniform(0.5, 3.0)))
    return img


def photo_background(photo, rng):
    """A background made from a real photograph: a random crop, scale and flip, sometimes cluttered."""
    ph, pw = photo.shape[:2]
    scale = rng.uniform(1.0, 1.8)
    crop_w, crop_h = int(pw / scale), int(ph / scale)
    x, y = int(rng.integers(0, pw - crop_w + 1)), int(rng.integers(0, ph - crop_h + 1))
    img = cv2.resize(photo[y:y + crop_h, x:x + crop_w], (W, H), interpolation=cv2.INTER_LINEAR)
    if rng.random() < 0.5:
        img = img[:, ::-1].copy()
    if rng.random() < 0.5:
        _clutter(img, rng, int(rng.integers(0, 8)), int(rng.integers(0, 3)))
    return img


# ---- the page in the photo ----

def random_corners(rng, max_rotation=25.0):
    """Where the page's corners (TL, TR, BR, BL) land in the photo: a plausible view from above."""
    for _ in range(100):
        height = rng.uniform(0.45, 0.92) * H
        width = height * PAGE_W / PAGE_H * rng.uniform(0.85, 1.2)
        cx, cy = rng.uniform(0.3, 0.7) * W, rng.uniform(0.35, 0.65) * H
        rect = np.float32([[-width / 2, -height / 2], [width / 2, -height / 2],
                           [width / 2, height / 2], [-width / 2, height / 2]])
        # Perspective: one edge nearer the camera than the other.
        tilt = rng.uniform(-0.25, 0.25)
        rect[:2, 0] *= 1 - tilt
        rect[2:, 0] *= 1 + tilt
        side = rng.uniform(-0.2, 0.2)
        rect[[0, 3], 1] *= 1 - side
        rect[[1, 2], 1] *= 1 + side
        a = np.deg2rad(rng.uniform(-max_rotation, max_rotation))
        rot = np.float32([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
        corners = rect @ rot.T + np.float32([cx, cy]) + rng.normal(0, 6, (4, 2)).astype(np.float32)
        margin = 6
        if (corners[:, 0].min() >= margin and corners[:, 0].max() <= W - 1 - margin
                and corners[:, 1].min() >= margin and corners[:, 1].max() <= H - 1 - margin):
            return corners.astype(np.float32)
    raise RuntimeError("no corners found")


PAGE_CORNERS = np.float32([[0, 0], [PAGE_W - 1, 0], [PAGE_W - 1, PAGE_H - 1], [0, PAGE_H - 1]])


def compose(background, page, corners, rng, lighting=True):
    """Puts the page into the background at the given corners, then lights and degrades the photo."""
    to_photo = cv2.getPerspectiveTransform(PAGE_CORNERS, corners)
    warped = cv2.warpPerspective(page, to_photo, (W, H), flags=cv2.INTER_LINEAR)
    alpha = cv2.warpPerspective(np.full((PAGE_H, PAGE_W), 255, np.uint8), to_photo, (W, H),
                                flags=cv2.INTER_LINEAR).astype(np.float32)[..., None] / 255
    if rng.random() < 0.5:  # a soft drop shadow under the page
        shadow = cv2.GaussianBlur(alpha[..., 0], (0, 0), float(rng.uniform(3, 12)))
        shift = rng.integers(-10, 11, 2)
        shadow = np.roll(shadow, (int(shift[1]), int(shift[0])), (0, 1))[..., None]
        background = background.astype(np.float32) * (1 - 0.5 * shadow)
    img = background.astype(np.float32) * (1 - alpha) + warped.astype(np.float32) * alpha
    if lighting:
        yy, xx = np.mgrid[0:H, 0:W].astype(np.float32)
        gain = 1 + rng.uniform(-0.35, 0.35) * (xx / W - 0.5) + rng.uniform(-0.35, 0.35) * (yy / H - 0.5)
        img *= (gain * rng.uniform(0.6, 1.15))[..., None]
        img *= rng.uniform(0.85, 1.15, 3).astype(np.float32)  # white balance
        if rng.random() < 0.35:  # a hard shadow across the scene (a hand, a lamp arm)
            p = rng.uniform(0, 1, (3, 2)) * np.float32([W, H])
            mask = np.zeros((H, W), np.float32)
            cv2.fillPoly(mask, [p.astype(np.int32)], 1.0)
            mask = cv2.GaussianBlur(mask, (0, 0), float(rng.uniform(2, 10)))
            img *= (1 - rng.uniform(0.2, 0.55) * mask)[..., None]
    if rng.random() < 0.4:
        img = cv2.GaussianBlur(img, (0, 0), float(rng.uniform(0.4, 1.6)))
    img += rng.standard_normal(img.shape).astype(np.float32) * float(rng.uniform(0, 8))
    img = np.clip(img, 0, 255).astype(np.uint8)
    if rng.random() < 0.3:
        quality = int(rng.integers(35, 90))
        img = cv2.imdecode(cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, quality])[1], cv2.IMREAD_COLOR)
    return img


def rectify(photo, corners, size=(200, 280)):
    """The page cut out of the photo at the given corners, as the model's operator does it."""
    target = np.float32([[0, 0], [size[0] - 1, 0], [size[0] - 1, size[1] - 1], [0, size[1] - 1]])
    to_page = cv2.getPerspectiveTransform(np.float32(corners), target)
    return cv2.warpPerspective(photo, to_page, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)


def scene(rng, background=None):
    """One training or test scene: (photo BGR uint8 HxWx3, corners 4x2 float32, kind index)."""
    kind = int(rng.integers(len(KINDS)))
    page = draw_page(kind, rng)
    if background is None:
        background = synthetic_background(rng)
    corners = random_corners(rng)
    return compose(background, page, corners, rng), corners, kind
