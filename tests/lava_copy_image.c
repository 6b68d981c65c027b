/* salvo_copy_image on a real device with synchronization validation on:
 * a region at an offset into another image, read back through
 * salvo_image_read (texels outside the region kept); formats of one texel
 * size; 2D arrays with 2D images, 3D boxes; regions of one image; stream
 * order against buffer copies and launches in one batch; graphs replayed
 * after the source changed; refusals. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "img_add.spv.h"
#include "salvo/salvo.h"
#include "support/lava.h"

typedef lava_fixture fixture;

/* An image with texel t (x fastest, then y, z and layer) holding
 * seed * 1000 + t, in 4-byte texels. */
static salvo_image *image(fixture *f, salvo_image_type type, salvo_format format, uint32_t w,
                          uint32_t h, uint32_t d, uint32_t layers, uint32_t seed)
{
    salvo_image_desc desc = {.type = type, .format = format, .width = w, .height = h,
                             .depth = d, .layers = layers};
    salvo_image *img = NULL;
    assert_int_equal(salvo_image_create(f->dev, &desc, &img), SALVO_OK);
    uint32_t n = w * (h ? h : 1) * (d ? d : 1) * (layers ? layers : 1);
    uint32_t *texels = malloc(n * 4);
    for (uint32_t t = 0; t < n; t++)
        texels[t] = seed * 1000 + t;
    assert_int_equal(salvo_image_write(img, NULL, texels, n * 4ull), SALVO_OK);
    free(texels);
    return img;
}

/* dst[box at (dx, dy, dz, dl)] = src[box at (sx, sy, sz, sl)] in a model
 * of texels of 4 bytes: each image w x h x d x layers. */
typedef struct box {
    uint32_t w, h, d, l; /* the image's extents */
} box;

static uint32_t at(box b, uint32_t x, uint32_t y, uint32_t z, uint32_t l)
{
    return ((l * b.d + z) * b.h + y) * b.w + x;
}

static void model_copy(uint32_t *dst, box db, const salvo_image_region *dr, const uint32_t *src,
                       box sb, const salvo_image_region *sr)
{
    for (uint32_t l = 0; l < sr->layers; l++)
        for (uint32_t z = 0; z < sr->depth; z++)
            for (uint32_t y = 0; y < sr->height; y++)
                for (uint32_t x = 0; x < sr->width; x++)
                    dst[at(db, dr->x + x, dr->y + y, dr->z + z, dr->layer + l)] =
                        src[at(sb, sr->x + x, sr->y + y, sr->z + z, sr->layer + l)];
}

static void model_init(uint32_t *m, box b, uint32_t seed)
{
    for (uint32_t t = 0; t < b.w * b.h * b.d * b.l; t++)
        m[t] = seed * 1000 + t;
}

static void check_image(fixture *f, salvo_image *img, const uint32_t *want, uint32_t n,
                        const char *what)
{
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    uint32_t *got = calloc(n, 4);
    assert_int_equal(salvo_image_read(img, NULL, got, n * 4ull), SALVO_OK);
    for (uint32_t t = 0; t < n; t++)
        if (got[t] != want[t])
            fail_msg("%s: texel %u is %u, expected %u", what, t, got[t], want[t]);
    free(got);
}

/* A 5 x 4 box at (3, 2) of a 16 x 8 image into (9, 1) of another; a
 * second copy in the same batch overwrites part of the first; NULL
 * regions copy a whole image. */
static void region_at_an_offset(void **state)
{
    fixture *f = *state;
    box b = {16, 8, 1, 1};
    salvo_image *src = image(f, SALVO_IMAGE_2D, SALVO_FORMAT_R32_UINT, 16, 8, 1, 1, 1);
    salvo_image *dst = image(f, SALVO_IMAGE_2D, SALVO_FORMAT_R32_UINT, 16, 8, 1, 1, 2);
    uint32_t ms[16 * 8], md[16 * 8];
    model_init(ms, b, 1);
    model_init(md, b, 2);
    salvo_image_region sr = {.x = 3, .y = 2, .width = 5, .height = 4};
    salvo_image_region dr = {.x = 9, .y = 1, .width = 5, .height = 4};
    assert_int_equal(salvo_copy_image(f->st, src, &sr, dst, &dr), SALVO_OK);
    sr.depth = dr.depth = sr.layers = dr.layers = 1;
    model_copy(md, b, &dr, ms, b, &sr);
    /* To the end from an origin (zero extents) on both sides. */
    salvo_image_region sr2 = {.x = 10, .y = 5}, dr2 = {.x = 10, .y = 5};
    assert_int_equal(salvo_copy_image(f->st, src, &sr2, dst, &dr2), SALVO_OK);
    salvo_image_region box2 = {10, 5, 0, 6, 3, 1, 0, 1};
    model_copy(md, b, &box2, ms, b, &box2);
    check_image(f, dst, md, 16 * 8, "region at an offset");
    check_image(f, src, ms, 16 * 8, "the source");
    assert_int_equal(salvo_copy_image(f->st, dst, NULL, src, NULL), SALVO_OK);
    check_image(f, src, md, 16 * 8, "whole image");
    salvo_image_destroy(dst);
    salvo_image_destroy(src);
}

/* Formats of one texel size copy bits as they are. */
static void formats_of_one_size(void **state)
{
    fixture *f = *state;
    salvo_image *src = image(f, SALVO_IMAGE_2D, SALVO_FORMAT_R32_UINT, 8, 4, 1, 1, 3);
    salvo_image_desc desc = {.type = SALVO_IMAGE_2D, .format = SALVO_FORMAT_RGBA8_UINT,
                             .width = 8, .height = 4};
    salvo_image *dst = NULL;
    assert_int_equal(salvo_image_create(f->dev, &desc, &dst), SALVO_OK);
    assert_int_equal(salvo_copy_image(f->st, src, NULL, dst, NULL), SALVO_OK);
    uint32_t want[32];
    model_init(want, (box){8, 4, 1, 1}, 3);
    check_image(f, dst, want, 32, "R32_UINT into RGBA8_UINT");
    salvo_image_destroy(dst);
    salvo_image_destroy(src);
}

/* A 2D array's layers with a 2D image, a 3D box; regions of one image. */
static void layers_boxes_and_one_image(void **state)
{
    fixture *f = *state;
    box ab = {6, 5, 1, 4}, pb = {6, 5, 1, 1}, vb = {4, 4, 4, 1};
    salvo_image *arr = image(f, SALVO_IMAGE_2D_ARRAY, SALVO_FORMAT_R32_UINT, 6, 5, 0, 4, 4);
    salvo_image *plain = image(f, SALVO_IMAGE_2D, SALVO_FORMAT_R32_UINT, 6, 5, 1, 1, 5);
    salvo_image *vol = image(f, SALVO_IMAGE_3D, SALVO_FORMAT_R32_SINT, 4, 4, 4, 1, 6);
    salvo_image *vol2 = image(f, SALVO_IMAGE_3D, SALVO_FORMAT_R32_UINT, 4, 4, 4, 1, 7);
    uint32_t ma[6 * 5 * 4], mp[6 * 5], mv[64], mv2[64];
    model_init(ma, ab, 4);
    model_init(mp, pb, 5);
    model_init(mv, vb, 6);
    model_init(mv2, vb, 7);
    /* Layer 2 of the array into the 2D image, then the 2D image's lower
     * half into layers [0, 1) at (0, 2). */
    salvo_image_region l2 = {.layer = 2, .layers = 1};
    assert_int_equal(salvo_copy_image(f->st, arr, &l2, plain, NULL), SALVO_OK);
    salvo_image_region l2b = {0, 0, 0, 6, 5, 1, 2, 1}, whole = {0, 0, 0, 6, 5, 1, 0, 1};
    model_copy(mp, pb, &whole, ma, ab, &l2b);
    salvo_image_region low = {.y = 3}, into = {.y = 2, .height = 2, .layers = 1};
    assert_int_equal(salvo_copy_image(f->st, plain, &low, arr, &into), SALVO_OK);
    salvo_image_region lowb = {0, 3, 0, 6, 2, 1, 0, 1}, intob = {0, 2, 0, 6, 2, 1, 0, 1};
    model_copy(ma, ab, &intob, mp, pb, &lowb);
    /* Layers [0, 2) into [2, 4) of the same array: apart. */
    salvo_image_region a01 = {.layer = 0, .layers = 2}, a23 = {.layer = 2, .layers = 2};
    assert_int_equal(salvo_copy_image(f->st, arr, &a01, arr, &a23), SALVO_OK);
    salvo_image_region a01b = {0, 0, 0, 6, 5, 1, 0, 2}, a23b = {0, 0, 0, 6, 5, 1, 2, 2};
    model_copy(ma, ab, &a23b, ma, ab, &a01b);
    /* A 2 x 2 x 3 box of a 3D image at (1, 1, 0) into (2, 0, 1) of another,
     * then of that one back into the first (formats of one size). */
    salvo_image_region vs = {1, 1, 0, 2, 2, 3, 0, 1}, vd = {2, 0, 1, 2, 2, 3, 0, 1};
    assert_int_equal(salvo_copy_image(f->st, vol, &vs, vol2, &vd), SALVO_OK);
    model_copy(mv2, vb, &vd, mv, vb, &vs);
    salvo_image_region top = {0, 0, 2, 4, 4, 2, 0, 1}, bottom = {0, 0, 0, 4, 4, 2, 0, 1};
    assert_int_equal(salvo_copy_image(f->st, vol2, &top, vol, &bottom), SALVO_OK);
    model_copy(mv, vb, &bottom, mv2, vb, &top);
    check_image(f, plain, mp, 6 * 5, "2D from a layer");
    check_image(f, arr, ma, 6 * 5 * 4, "array");
    check_image(f, vol2, mv2, 64, "3D");
    check_image(f, vol, mv, 64, "3D back");
    salvo_image_destroy(vol2);
    salvo_image_destroy(vol);
    salvo_image_destroy(plain);
    salvo_image_destroy(arr);
}

/* In one batch: buffer -> image, image -> image, a kernel adding to the
 * copy, image -> buffer; each after the one before. */
static void ordered_in_a_batch(void **state)
{
    fixture *f = *state;
    enum { W = 32, H = 8, N = W * H };
    salvo_image *a = image(f, SALVO_IMAGE_2D, SALVO_FORMAT_R32_UINT, W, H, 1, 1, 0);
    salvo_image *b = image(f, SALVO_IMAGE_2D, SALVO_FORMAT_R32_UINT, W, H, 1, 1, 0);
    salvo_buffer *buf = NULL;
    assert_int_equal(salvo_buffer_create(f->dev, N * 4, SALVO_DOMAIN_HOST, &buf), SALVO_OK);
    salvo_kernel *k = NULL;
    salvo_kernel_desc kd = {.spirv = img_add_spv, .spirv_size = sizeof img_add_spv,
                            .name = "img_add"};
    assert_int_equal(salvo_kernel_create(f->dev, &kd, &k), SALVO_OK);
    uint32_t *p = NULL;
    assert_int_equal(salvo_buffer_map(buf, (void **)&p), SALVO_OK);
    for (uint32_t i = 0; i < N; i++)
        p[i] = i;
    for (int round = 0; round < 4; round++) {
        assert_int_equal(salvo_copy_buffer_to_image(f->st, buf, 0, a, NULL), SALVO_OK);
        assert_int_equal(salvo_copy_image(f->st, a, NULL, b, NULL), SALVO_OK);
        salvo_binding bd = {.binding = 0, .image = b};
        const uint32_t push[1] = {1};
        const uint32_t groups[3] = {W / 8, H / 8, 1}; /* 8 x 8 workgroups */
        assert_int_equal(salvo_launch(f->st, k, groups, &bd, 1, push, sizeof push), SALVO_OK);
        assert_int_equal(salvo_copy_image(f->st, b, NULL, a, NULL), SALVO_OK);
        assert_int_equal(salvo_copy_image_to_buffer(f->st, a, NULL, buf, 0), SALVO_OK);
    }
    assert_int_equal(salvo_stream_synchronize(f->st), SALVO_OK);
    for (uint32_t i = 0; i < N; i++)
        if (p[i] != i + 4)
            fail_msg("[%u] = %u, expected %u", i, p[i], i + 4);
    salvo_kernel_destroy(k);
    salvo_buffer_destroy(buf);
    salvo_image_destroy(b);
    salvo_image_destroy(a);
}

/* A captured copy is a node: replays copy what the source holds then. */
static void copy_in_graph(void **state)
{
    fixture *f = *state;
    box b = {8, 8, 1, 1};
    salvo_image *src = image(f, SALVO_IMAGE_2D, SALVO_FORMAT_R32_UINT, 8, 8, 1, 1, 1);
    salvo_image *dst = image(f, SALVO_IMAGE_2D, SALVO_FORMAT_R32_UINT, 8, 8, 1, 1, 2);
    assert_int_equal(salvo_stream_begin_capture(f->st), SALVO_OK);
    salvo_image_region sr = {1, 1, 0, 3, 3, 1, 0, 1}, dr = {4, 5, 0, 3, 3, 1, 0, 1};
    assert_int_equal(salvo_copy_image(f->st, src, &sr, dst, &dr), SALVO_OK);
    salvo_graph *g = NULL;
    assert_int_equal(salvo_stream_end_capture(f->st, &g), SALVO_OK);
    assert_int_equal(salvo_graph_node_count(g), 1);
    assert_int_equal(salvo_graph_set_bindings(g, 0, NULL, 0), SALVO_ERROR_INVALID_ARGUMENT);
    uint32_t ms[64], md[64];
    model_init(md, b, 2);
    for (uint32_t seed = 10; seed < 13; seed++) {
        model_init(ms, b, seed);
        assert_int_equal(salvo_image_write(src, NULL, ms, sizeof ms), SALVO_OK);
        assert_int_equal(salvo_graph_launch(g, f->st), SALVO_OK);
        model_copy(md, b, &dr, ms, b, &sr);
        check_image(f, dst, md, 64, "graph replay");
    }
    salvo_graph_destroy(g);
    salvo_image_destroy(dst);
    salvo_image_destroy(src);
}

static void bad_regions(void **state)
{
    fixture *f = *state;
    salvo_image *a = image(f, SALVO_IMAGE_2D, SALVO_FORMAT_R32_UINT, 8, 8, 1, 1, 1);
    salvo_image *b = image(f, SALVO_IMAGE_2D, SALVO_FORMAT_R32_UINT, 8, 8, 1, 1, 2);
    salvo_image *c = image(f, SALVO_IMAGE_3D, SALVO_FORMAT_R32_UINT, 8, 8, 1, 1, 3);
    salvo_image_desc d16 = {.type = SALVO_IMAGE_2D, .format = SALVO_FORMAT_R16_UINT, .width = 8,
                            .height = 8};
    salvo_image *h = NULL;
    assert_int_equal(salvo_image_create(f->dev, &d16, &h), SALVO_OK);
    salvo_image_region r44 = {.width = 4, .height = 4}, r43 = {.width = 4, .height = 3};
    salvo_image_region out = {.x = 6, .width = 4, .height = 4};
    salvo_image_region self_a = {.x = 0, .y = 0, .width = 4, .height = 4};
    salvo_image_region self_b = {.x = 4, .y = 4, .width = 4, .height = 4}; /* apart, one layer */
    static const char *const says[] = {"must be the same", "outside", "outside", "texels of",
                                       "3D", "different layers", "NULL", "NULL", "NULL"};
    salvo_status got[9] = {
        salvo_copy_image(f->st, a, &r44, b, &r43),
        salvo_copy_image(f->st, a, &out, b, &r44),
        salvo_copy_image(f->st, a, &r44, b, &out),
        salvo_copy_image(f->st, a, NULL, h, NULL),
        salvo_copy_image(f->st, a, NULL, c, NULL),
        salvo_copy_image(f->st, a, &self_a, a, &self_b),
        salvo_copy_image(NULL, a, NULL, b, NULL),
        salvo_copy_image(f->st, NULL, NULL, b, NULL),
        salvo_copy_image(f->st, a, NULL, NULL, NULL),
    };
    (void)says;
    for (int i = 0; i < 9; i++)
        if (got[i] != SALVO_ERROR_INVALID_ARGUMENT)
            fail_msg("case %d: %s", i, salvo_status_string(got[i]));
    /* Each message, one by one. */
    for (int i = 0; i < 6; i++) {
        salvo_image *dsts[6] = {b, b, b, h, c, a};
        const salvo_image_region *srs[6] = {&r44, &out, &r44, NULL, NULL, &self_a};
        const salvo_image_region *drs[6] = {&r43, &r44, &out, NULL, NULL, &self_b};
        assert_int_equal(salvo_copy_image(f->st, a, srs[i], dsts[i], drs[i]),
                         SALVO_ERROR_INVALID_ARGUMENT);
        if (!strstr(salvo_last_error(), says[i]))
            fail_msg("case %d: '%s' does not say '%s'", i, salvo_last_error(), says[i]);
    }
    /* Nothing was recorded. */
    uint32_t want[64];
    model_init(want, (box){8, 8, 1, 1}, 1);
    check_image(f, a, want, 64, "after refusals");
    model_init(want, (box){8, 8, 1, 1}, 2);
    check_image(f, b, want, 64, "untouched");
    salvo_image_destroy(h);
    salvo_image_destroy(c);
    salvo_image_destroy(b);
    salvo_image_destroy(a);
}

int main(void)
{
    lava_require_device();
    const struct CMUnitTest tests[] = {
        lava_test(region_at_an_offset),
        lava_test(formats_of_one_size),
        lava_test(layers_boxes_and_one_image),
        lava_test(ordered_in_a_batch),
        lava_test(copy_in_graph),
        lava_test(bad_regions),
    };
    return lava_run_tests(tests);
}
